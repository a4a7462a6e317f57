package interceptor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/scripted"
)

// Regression tests of issue 7 (production safety), guard version 4.

// twoLoopingBranches are two branches whose calls meet one pending trip in
// the same workflow task: the Code branch stalls (three identical outputs)
// while the Verify branch keeps calling.
// twoLoopingBranches are two sub-agents stuck together: each repeats its
// own result, so every iteration of the Code/Verify loop they form repeats.
func twoLoopingBranches() (a, b []turn) {
	return repeat(5, "Code", "same"), repeat(5, "Verify", "same verdict")
}

func twoBranchResults(t *testing.T, env interface{ GetWorkflowResult(any) error }) []loopResult {
	t.Helper()
	var res []loopResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, res, 2)
	return res
}

func TestParallelBranchesOneTripOneHalt(t *testing.T) {
	tests := []struct {
		name     string
		decision string
		// paced makes the Verify branch sleep ten minutes before each
		// call, so that it is sure to call while Code is paused.
		paced bool
	}{
		{name: "same task, resume", decision: "resume"},
		{name: "same task, escalate", decision: "escalate"},
		{name: "waiting branch, escalate", decision: "escalate", paced: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, interceptor.Options{})
			halted := statusThen(t, env, decideAfter, func() {
				env.SignalWorkflow(tt.decision, nil)
			})
			// Which branch's calls the guard sees first depends on when the
			// test environment's activities finish, and some orders lead the
			// detectors to a later trip of their own: answer it too.
			for k := 2; k <= 6; k++ {
				env.RegisterDelayedCallback(func() {
					if status(t, env).State == protocol.StateHalted {
						env.SignalWorkflow(tt.decision, nil)
					}
				}, time.Duration(k)*decideAfter)
			}
			a, b := twoLoopingBranches()
			if tt.paced {
				for i := range b {
					b[i].Sleep = 10 * time.Minute
				}
			}
			env.ExecuteWorkflow(twoBranches, a, b)
			require.True(t, env.IsWorkflowCompleted(), "one decision releases every waiting branch")
			require.NoError(t, env.GetWorkflowError())
			res := twoBranchResults(t, env)

			assert.Equal(t, protocol.StateHalted, halted.State)
			assert.Equal(t, 1, halted.Halts, "one trip, one halt")
			if tt.decision == "resume" {
				assert.Equal(t, 5, res[0].Calls)
				assert.Equal(t, 5, res[1].Calls)
				return
			}
			// The escalation reaches the call that met the trip, which may
			// be either branch's (the trip names the node that repeated,
			// not the call it stopped), and every call waiting with it: a
			// branch either ran all its calls before the halt or ends
			// escalated.
			assert.True(t, res[0].Escalated || res[1].Escalated, "the halted branch is escalated")
			for i, r := range res {
				assert.True(t, r.Escalated || r.Calls == 5, "branch %d: escalated, or done before the halt (%d calls)", i, r.Calls)
			}
			if tt.paced {
				assert.True(t, res[1].Escalated, "the waiting branch gets the same escalation")
				assert.Equal(t, 1, res[1].Calls, "its first call waited and was escalated")
			}
		})
	}
}

func TestCancelWhilePausedReturnsCanceled(t *testing.T) {
	metrics := newCountingHandler()
	env := newEnvWithMetrics(t, interceptor.Options{}, metrics)
	halted := statusThen(t, env, decideAfter, func() {
		env.CancelWorkflow()
	})
	env.ExecuteWorkflow(scriptLoop, repeat(6, "Code", "same"))
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	var canceled *temporal.CanceledError
	assert.ErrorAs(t, err, &canceled, "the workflow ends canceled: %v", err)
	assert.False(t, interceptor.IsEscalated(err))

	assert.Equal(t, protocol.StateHalted, halted.State)
	final := status(t, env)
	assert.Equal(t, protocol.StateRunning, final.State, "no escalation in status")
	require.NotNil(t, final.LastDecision)
	assert.Equal(t, protocol.ActionCancel, final.LastDecision.Action)
	assert.Equal(t, int64(1), metrics.counts["loopguard_halts{detector=identical_output,on_halt=pause,reason=stalled}"], "%v", metrics.counts)
	assert.Zero(t, metrics.counts["loopguard_escalations{reason=stalled}"], "no escalation metric: %v", metrics.counts)
}

func TestWorkflowsOwnSignalsAndUpdatesAreNotLost(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	var rejected protocol.Status
	var ownAnswer any
	// Nothing is halted: the workflow's own resume starts its job.
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("resume", nil) }, time.Minute)
	env.RegisterDelayedCallback(func() {
		rejected = status(t, env)
		// The workflow registered its own "escalate" update: it wins.
		env.UpdateWorkflow("escalate", "u1", &testUpdate{onComplete: func(v any, err error) {
			require.NoError(t, err)
			ownAnswer = v
		}})
	}, 2*time.Minute)
	halted := statusThen(t, env, decideAfter, func() {
		env.SignalWorkflow("halt", nil)   // already halted: the workflow's
		env.SignalWorkflow("resume", nil) // the guard's: it answers the halt
	})
	env.ExecuteWorkflow(scripted.OwnSignals, repeat(5, "Code", "same"))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res scripted.OwnSignalsResult
	require.NoError(t, env.GetWorkflowResult(&res))

	require.NotNil(t, rejected.LastRejected)
	assert.True(t, rejected.LastRejected.PassedOn, "the guard had nothing to do with it and passed it on")
	assert.Equal(t, "own escalate", ownAnswer)
	assert.Equal(t, protocol.StateHalted, halted.State)
	assert.Equal(t, 5, res.Loop.Calls)
	assert.Equal(t, 1, res.Resumed, "the first resume reached the workflow, the second answered the halt")
	assert.Equal(t, 1, res.Halted, "the halt the guard did not take reached the workflow")
	assert.Equal(t, scripted.OwnDetails, res.Details, "the guard clears only the details it set")
	final := status(t, env)
	require.NotNil(t, final.LastDecision)
	assert.Equal(t, protocol.ActionResume, final.LastDecision.Action)
}

func TestHaltInFirstWorkflowTask(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("halt", map[string]string{"by": "ana", "reason": "before it starts"})
	}, 0)
	halted := statusThen(t, env, decideAfter, func() {
		env.SignalWorkflow("escalate", nil)
	})
	env.ExecuteWorkflow(scriptLoop, distinct(3, "Plan"))
	res := result(t, env)
	assert.True(t, res.Escalated)
	assert.Equal(t, 1, res.Calls, "the first call is the one halted")
	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonUserStop, halted.Halt.HaltReason)
	assert.Contains(t, halted.Halt.Message, "ana asked to stop: before it starts")
}

func TestSelectorOverEscalatedChild(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("escalate", map[string]string{"reason": "enough children"}) }, decideAfter)
	// The same script every time: the child node "ScriptLoop" returns the
	// same output and stalls at the fourth child.
	env.ExecuteWorkflow(scripted.ChildLoop, distinct(2, "Plan"), 6)
	res := result(t, env)
	assert.True(t, res.Escalated, "the Selector delivered the escalation")
	assert.Equal(t, "enough children", res.Reason)
	assert.Equal(t, 4, res.Calls)
}

func TestPausedTimeIsNotCycleRuntime(t *testing.T) {
	env := newEnv(t, interceptor.Options{MaxCycleRuntime: 30 * time.Minute})
	// The coder repeats itself while the verifier has nothing new (the
	// stall, at the third iteration); then the loop progresses again.
	give := []turn{
		{Node: "Code", Output: "same"}, {Node: "Verify", Output: "failing=5"},
		{Node: "Code", Output: "same"}, {Node: "Verify", Output: "failing=5"},
		{Node: "Code", Output: "same"}, {Node: "Verify", Output: "failing=4"},
		{Node: "Code", Output: "p4"}, {Node: "Verify", Output: "failing=2"},
		{Node: "Code", Output: "p5"}, {Node: "Verify", Output: "failing=1"},
	}
	for i := range give {
		give[i].Sleep = time.Minute
	}
	halted := statusThen(t, env, decideAfter, func() { env.SignalWorkflow("resume", nil) })
	var later protocol.Status
	env.RegisterDelayedCallback(func() {
		later = status(t, env)
		if later.State == protocol.StateHalted {
			env.SignalWorkflow("escalate", nil)
		}
	}, 3*decideAfter)
	env.ExecuteWorkflow(scriptLoop, give)
	res := result(t, env)
	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonStalled, halted.Halt.HaltReason, "the stall halts first")
	if later.Halt != nil {
		t.Logf("second halt: %s %s %s", later.Halt.HaltReason, later.Halt.Detector, later.Halt.Message)
	}
	assert.Zero(t, later.Halts, "done long before: no second halt to answer")
	assert.False(t, res.Escalated)
	assert.Equal(t, 10, res.Calls)
	assert.Equal(t, 1, status(t, env).Halts, "an hour paused is not an hour of cycle runtime")
}

// haltedListener is a supervisor: it sleeps an hour, then counts the
// loop.halted signals it received.
func haltedListener(ctx workflow.Context) (int, error) {
	if err := workflow.Sleep(ctx, time.Hour); err != nil {
		return 0, err
	}
	ch := workflow.GetSignalChannel(ctx, protocol.DefaultHaltedSignal)
	n := 0
	for ch.ReceiveAsync(nil) {
		n++
	}
	return n, nil
}

func TestStaleHaltedSignalAfterResetIsTheGuards(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	env.RegisterWorkflow(haltedListener)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "wf-reset"})
	env.RegisterDelayedCallback(func() {
		// Re-applied by a reset: this workflow's own halt, from the old run.
		env.SignalWorkflow(protocol.DefaultHaltedSignal, protocol.HaltEvent{WorkflowID: "wf-reset", RunID: "old-run", Seq: 1})
		// Another workflow's halt, for this workflow as its supervisor.
		env.SignalWorkflow(protocol.DefaultHaltedSignal, protocol.HaltEvent{WorkflowID: "agent-7", RunID: "run-7", Seq: 1})
	}, time.Minute)
	env.ExecuteWorkflow(haltedListener)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var n int
	require.NoError(t, env.GetWorkflowResult(&n))
	assert.Equal(t, 1, n, "the supervisor gets the other workflow's halt, not its own stale echo")
}
