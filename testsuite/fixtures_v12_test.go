package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/testsuite"
)

// The v12- fixtures are histories of guard version 12: every stuck loop
// halts, in every shape, and no way a halt ends charges the loop its
// pause.

// TestV12FixturesNeedVersion12: each halted once and was escalated; with
// its version marker rewritten to 11 neither replays. v12-parallel-rounds:
// a version-11 guard counts the warning's window in calls, so the eight
// parallel Research calls of a round outrun it: the loop is warned again
// instead of halted. v12-ninth-warning: a version-11 guard counts a
// loop's warnings from the 8 it keeps, never reaches the ninth, and warns
// instead of halting. v12-escalated-pause: a version-11 guard charges the
// escalated halt's 3 s pause to the cycle, over MaxCycleRuntime 2s, and
// halts the session's next call.
func TestV12FixturesNeedVersion12(t *testing.T) {
	for _, file := range []string{"v12-parallel-rounds.json", "v12-ninth-warning.json", "v12-escalated-pause.json"} {
		t.Run(file, func(t *testing.T) {
			info := testsuite.Inspect(readFixture(t, file))
			assert.Equal(t, 12, info.GuardVersion)
			assert.Equal(t, 1, info.HaltedSignals, "one halt")
			assert.True(t, info.Closed)
			requireNeedsVersion(t, file, 12)
		})
	}
}
