package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/testsuite"
)

// The v11- fixtures are histories of guard version 11: a call whose
// result the guard reads while a halt is in force is charged up to the
// halt's start.

// TestV11FixturesNeedVersion11: v11-paused-call-read halted once (the
// stall) and completed; with its version marker rewritten to 10 it no
// longer replays, because a version-10 guard charges the sub-agent's
// Research call the three seconds of the pause before it ended, over
// MaxNodeRuntime 2s, and halts the coder's Research call on node_runtime.
func TestV11FixturesNeedVersion11(t *testing.T) {
	info := testsuite.Inspect(readFixture(t, "v11-paused-call-read.json"))
	assert.Equal(t, 11, info.GuardVersion)
	assert.Equal(t, 1, info.HaltedSignals, "one halt: the stall, not the pause")
	assert.True(t, info.Closed)
	requireNeedsVersion(t, "v11-paused-call-read.json", 11)
}
