package testsuite_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

// TestReplayIgnoresStalls: a replay checks determinism, so a workflow
// task that stalls for more than the SDK's one-second deadlock limit (here
// a native sleep, as a loaded CI machine would stall it) replays; with
// DeadlockDetection it fails as the SDK's detector says.
func TestReplayIgnoresStalls(t *testing.T) {
	stalled := true
	register := func(r worker.WorkflowRegistry) {
		r.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.LoopInput) (workflows.LoopResult, error) {
			if stalled {
				stalled = false
				time.Sleep(1200 * time.Millisecond) // the stall, once per replay
			}
			return workflows.CoderVerifierLoop(ctx, in)
		}, workflow.RegisterOptions{Name: "CoderVerifierLoop"})
	}
	const file = "testdata/histories/unguarded-converging.json"
	require.NoError(t, testsuite.ReplayFile(file, testsuite.ReplayOptions{Register: register}))

	stalled = true
	err := testsuite.ReplayFile(file, testsuite.ReplayOptions{Register: register, DeadlockDetection: true})
	var re *testsuite.ReplayError
	require.True(t, errors.As(err, &re), "want a ReplayError, got %v", err)
	assert.Contains(t, re.Err.Error(), "TMPRL1101")
	assert.False(t, re.Nondeterministic)
}
