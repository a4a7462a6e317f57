package watch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// TestWatchNamesAResetRunAsTheServer: followed task by task, a run reset
// from a halted run (the worker's TestResetRunAnsweredSigned recorded it)
// is named by the reset's new run id, and so are its halts' HaltEvents
// (Status, the fallback signal), not by the base run's id its start
// event keeps.
func TestWatchNamesAResetRunAsTheServer(t *testing.T) {
	const (
		resetRun = "be53ef20-7fe5-4cc4-9825-e3a531421215"
		baseRun  = "01a2233d-a699-7bd9-a508-c47d961ca35e"
	)
	pages, _ := tasks(t, "../../interceptor/history/testdata/reset-signed.json")
	r, err := newReader(interceptor.Options{}, nil)
	require.NoError(t, err)
	var halts []protocol.HaltEvent
	for _, p := range pages {
		r.add(p...)
		for _, v := range r.snapshot().Verdicts {
			if v.Halt != nil {
				halts = append(halts, *v.Halt)
			}
		}
	}
	s := r.rest()
	assert.Equal(t, resetRun, s.RunID)
	require.NotEmpty(t, halts)
	for _, h := range halts {
		assert.Equal(t, resetRun, h.RunID, "halt %d", h.Seq)
		assert.NotEqual(t, baseRun, h.RunID)
	}
}
