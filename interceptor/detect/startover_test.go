package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopUntilTrip runs unit's steps round and round from position *at,
// until a call is refused or limit calls went by. It returns how many
// calls went ahead and the trip; *at is left at the refused call, which
// the next round makes again.
func (d *driver) loopUntilTrip(unit []string, at *int, limit int) (int, *Trip) {
	for c := 0; c < limit; c++ {
		if t := d.do(unit[*at%len(unit)]); t != nil {
			return c, t
		}
		*at++
	}
	return limit, nil
}

// startOverPolicy is DefaultPolicy with budgets out of the way of the
// detectors that read repetition.
func startOverPolicy() Policy {
	p := DefaultPolicy()
	p.MaxCallsPerNode, p.MaxCycleIterations, p.MaxTotalCalls = 1000, 1000, 10000
	return p
}

// startOverCases are loops that each detector reading repetition trips
// on, under DefaultPolicy changed by pol.
var startOverCases = []struct {
	name     string
	detector Detector
	unit     []string
	pol      func(*Policy)
}{
	{"sequence, every node once", DetectorIdenticalOutput, list("a=x", "b=y"), nil},
	{"sequence, a node twice", DetectorOutputOscillation, list("m=1", "t=x", "m=2", "t=x"), nil},
	{"stale rounds", DetectorTransitionOscillation, list(
		"plan=A", "build=A", "test=FA", "plan=B", "build=B", "test=FB",
		"plan=B", "build=B", "test=FB", "plan=A", "build=A", "test=FA"), nil},
	{"sequence, failing", DetectorRepeatedError, list("a=x", "b!boom"), nil},
	{"errors, whatever was tried", DetectorRepeatedError, list("a", "b!boom"), nil},
	{"stall, declared progress", DetectorUnchangedProgress, list("a;p=same"), nil},
	{"stall, declared metric", DetectorNoImprovement, list("a;m=5"), nil},
	{"edges", DetectorEdgeWithoutProgress, list("a=x", "b=y", "a=x", "b=z", "a=x", "b=w"),
		func(p *Policy) { p.MaxEdgeWithoutProgress = 2 }},
}

// TestResetNeedsAWholeWindow (guard version 9, Policy.OneLoop): for every
// detector that reads repetition, a reset (Resume, which a human's resume,
// a warning and a halt handler's decision all call) makes the loop repeat
// a whole window again before the detector trips: as many calls as the
// first trip needed from a fresh state, at least.
func TestResetNeedsAWholeWindow(t *testing.T) {
	for _, tt := range startOverCases {
		t.Run(tt.name, func(t *testing.T) {
			p := startOverPolicy()
			if tt.pol != nil {
				tt.pol(&p)
			}
			d, at := newDriver(p), 0
			first, trip := d.loopUntilTrip(tt.unit, &at, 200)
			require.NotNil(t, trip, "the loop trips")
			require.Equal(t, tt.detector, trip.Detector, trip.Message)
			for reset := 1; reset <= 3; reset++ {
				d.s.Resume(trip, Extension{})
				var after int
				after, trip = d.loopUntilTrip(tt.unit, &at, 200)
				require.NotNil(t, trip, "reset %d: the loop trips again", reset)
				assert.Equal(t, tt.detector, trip.Detector, trip.Message)
				t.Logf("reset %d: %d calls (first trip: %d)", reset, after, first)
				assert.GreaterOrEqual(t, after, first, "reset %d: the next trip needs a whole window", reset)
			}
		})
	}
}
