package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoopIdentityAndMeasure (Policy.OneLoop): a trip names its loop by
// the anchor of its cycle, which a detour through a new node keeps while
// the cycle id changes, and measures it: the period of the repetition and
// the steps the detector needs to trip again.
func TestLoopIdentityAndMeasure(t *testing.T) {
	d := newDriver(startOverPolicy())
	at, loop := 0, list("model=bash ls", "bash=files")
	_, first := d.loopUntilTrip(loop, &at, 100)
	require.NotNil(t, first)
	assert.Equal(t, "model", first.Loop)
	assert.Equal(t, 2, first.Period)
	assert.Equal(t, 5, first.Window, "three rounds of two, the last one's first step")

	d.s.Resume(first, Extension{})
	require.Nil(t, d.do("model=probe"))
	require.Nil(t, d.do("probe=found nothing"))
	at = 0
	_, again := d.loopUntilTrip(loop, &at, 100)
	require.NotNil(t, again)
	assert.NotEqual(t, first.CycleID, again.CycleID, "the detour joined the cycle")
	assert.Equal(t, first.Loop, again.Loop, "the same loop")

	long := list("m=1", "t=1", "m=2", "t=2", "m=3", "t=3", "m=4", "t=4", "m=5", "t=5", "m=6", "t=6")
	at = 0
	p := startOverPolicy()
	p.MaxEdgeWithoutProgress = 100 // the tool-call grain's budgets let the sequence rule see it
	_, trip := newDriver(p).loopUntilTrip(long, &at, 100)
	require.NotNil(t, trip)
	assert.Equal(t, DetectorOutputOscillation, trip.Detector, trip.Message)
	assert.Equal(t, 12, trip.Period)
	assert.Equal(t, 24, trip.Window, "two periods: the model steps six times in one")
}
