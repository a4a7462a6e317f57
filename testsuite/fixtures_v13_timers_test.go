package testsuite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
)

// The v13-timers fixtures are histories of guard version 13 whose verdicts
// turn on the timers the guard hears: exactly those the history holds.

// TestV13TimerFixturesNeedVersion13: each halted once, where the analysis
// of its history halts it too, and was escalated; with its version marker
// rewritten to 12 neither replays. v13-timers-options: a version-12 guard
// hears no timer from NewTimerWithOptions and AwaitWithOptions, takes the
// backed-off retries for a tight loop and halts at call 4 instead of 7.
// v13-timers-zero: a version-12 guard takes each zero Sleep for a timer,
// takes the tight loop for waiting and halts at call 7 instead of 4.
func TestV13TimerFixturesNeedVersion13(t *testing.T) {
	tests := []struct {
		give     string
		wantCall int
		wantBy   string
	}{
		{give: "v13-timers-options.json", wantCall: 7, wantBy: "edge_without_progress"},
		{give: "v13-timers-zero.json", wantCall: 4, wantBy: "repeated_error"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			info := testsuite.Inspect(readFixture(t, tt.give))
			assert.Equal(t, 13, info.GuardVersion)
			assert.Equal(t, 1, info.HaltedSignals, "one halt")
			assert.True(t, info.Closed)
			requireNeedsVersion(t, tt.give, 13)

			ex, err := testsuite.AnalyzeFile(filepath.Join(historiesDir, tt.give), testsuite.AnalyzeOptions{AsRecorded: true})
			require.NoError(t, err)
			var halts []interceptor.Verdict
			for _, v := range ex.Verdicts {
				if v.Halt != nil {
					halts = append(halts, v)
				}
			}
			require.Len(t, halts, 1)
			assert.Equal(t, tt.wantCall, halts[0].Call)
			assert.Equal(t, tt.wantBy, string(halts[0].Halt.Detector))
			require.Len(t, ex.Recorded.Halts, 1)
			assert.Equal(t, tt.wantBy, string(ex.Recorded.Halts[0].Detector), "the live guard's halt")
		})
	}
}
