package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/internal/scripted"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// Regression tests of issue 7 (production safety) on the embedded server:
// each runs a scripted workflow, answers it as an operator would, and
// checks the history is healthy and replays with the guard.

// safetyServer starts a guarded worker of the scripted workflows on the
// shared server.
func safetyServer(t *testing.T, opts interceptor.Options) (context.Context, client.Client, string) {
	t.Helper()
	t.Parallel()
	c := devtest.NewClient(t, sharedServer(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	queue := queueFor(t)
	testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{Guard: &opts, Register: scripted.Register})
	return ctx, c, queue
}

func startScripted(t *testing.T, ctx context.Context, c client.Client, queue, id string, wf any, args ...any) client.WorkflowRun {
	t.Helper()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute,
	}, wf, args...)
	require.NoError(t, err)
	return run
}

// healthyScripted checks that no workflow task of the run failed and that
// its history replays with the guard, with default and with other options.
func healthyScripted(t *testing.T, ctx context.Context, c client.Client, id string) *historypb.History {
	t.Helper()
	h := exportHistory(t, ctx, c, id, "")
	require.Zero(t, testsuite.Inspect(h).WorkflowTaskFailures, "workflow task failures in %s", id)
	for _, g := range []interceptor.Options{{}, {RepeatThreshold: 2, OnHalt: interceptor.OnHaltFail}} {
		require.NoError(t, testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: g, Register: scripted.RegisterWorkflows}))
	}
	return h
}

func TestRealServerParallelBranchesShareOneHalt(t *testing.T) {
	for _, decision := range []string{"resume", "escalate"} {
		t.Run(decision, func(t *testing.T) {
			ctx, c, queue := safetyServer(t, interceptor.Options{})
			id := queue + "-wf"
			// The Code branch stalls; the Verify branch calls on in the
			// same workflow tasks and meets the same pending trip.
			run := startScripted(t, ctx, c, queue, id, scripted.TwoBranches, repeat(5, "Code", "same"), distinctTurns(5, "Verify"))
			s := waitStatus(t, ctx, c, id, func(s interceptor.Status) bool { return s.State == interceptor.StateHalted })
			assert.Equal(t, 1, s.Halts)
			// Until the decision, the pause shows and no second halt comes.
			waitEvents(t, ctx, c, id, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, 1)
			for range 5 {
				s = waitStatus(t, ctx, c, id, func(interceptor.Status) bool { return true })
				assert.Equal(t, interceptor.StateHalted, s.State)
				assert.Equal(t, 1, s.Halts, "one trip, one halt")
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, c.SignalWorkflow(ctx, id, "", decision, map[string]string{"by": "e2e"}))
			var res []loopResult
			require.NoError(t, run.Get(ctx, &res), "one decision releases every branch")
			require.Len(t, res, 2)
			if decision == "resume" {
				assert.Equal(t, []int{5, 5}, []int{res[0].Calls, res[1].Calls})
			} else {
				assert.True(t, res[0].Escalated)
				assert.True(t, res[1].Escalated, "the waiting branch gets the same escalation")
			}
			h := healthyScripted(t, ctx, c, id)
			assert.Equal(t, 1, signalsNamed(h, interceptor.DefaultHaltedSignal), "one loop.halted")
		})
	}
}

func TestRealServerCancelWhilePaused(t *testing.T) {
	ctx, c, queue := safetyServer(t, interceptor.Options{})
	id := queue + "-wf"
	run := startScripted(t, ctx, c, queue, id, scriptLoop, repeat(6, "Code", "same"))
	waitStatus(t, ctx, c, id, func(s interceptor.Status) bool { return s.State == interceptor.StateHalted })
	require.NoError(t, c.CancelWorkflow(ctx, id, ""))
	err := run.Get(ctx, nil)
	var canceled *temporal.CanceledError
	require.True(t, errors.As(err, &canceled), "the workflow ends canceled, got %v", err)
	s := waitStatus(t, ctx, c, id, func(interceptor.Status) bool { return true })
	assert.Equal(t, interceptor.StateRunning, s.State, "not escalated")
	require.NotNil(t, s.LastDecision)
	assert.Equal(t, interceptor.ActionCancel, s.LastDecision.Action)
	h := healthyScripted(t, ctx, c, id)
	events := h.GetEvents()
	assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, events[len(events)-1].GetEventType())
}

func TestRealServerSignalWithStartHalt(t *testing.T) {
	ctx, c, queue := safetyServer(t, interceptor.Options{})
	id := queue + "-wf"
	run, err := c.SignalWithStartWorkflow(ctx, id, interceptor.DefaultHaltSignal, map[string]string{"by": "ana", "reason": "hold it"},
		client.StartWorkflowOptions{TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute}, scriptLoop, distinctTurns(3, "Plan"))
	require.NoError(t, err)
	s := waitStatus(t, ctx, c, id, func(s interceptor.Status) bool { return s.State == interceptor.StateHalted })
	require.NotNil(t, s.Halt)
	assert.Equal(t, interceptor.ReasonUserStop, s.Halt.HaltReason)
	assert.Contains(t, s.Halt.Message, "ana asked to stop: hold it")
	require.NoError(t, c.SignalWorkflow(ctx, id, "", interceptor.DefaultEscalateSignal, nil))
	var res loopResult
	require.NoError(t, run.Get(ctx, &res))
	assert.True(t, res.Escalated)
	assert.Equal(t, 1, res.Calls, "the first call was halted")
	healthyScripted(t, ctx, c, id)
}

func TestRealServerWorkflowsOwnSignals(t *testing.T) {
	ctx, c, queue := safetyServer(t, interceptor.Options{})
	id := queue + "-wf"
	run := startScripted(t, ctx, c, queue, id, scripted.OwnSignals, repeat(5, "Code", "same"))
	// Nothing is halted: the job's own resume reaches it.
	require.NoError(t, c.SignalWorkflow(ctx, id, "", "resume", nil))
	waitStatus(t, ctx, c, id, func(s interceptor.Status) bool { return s.State == interceptor.StateHalted })
	// The workflow's own "escalate" update replaces the guard's.
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: "escalate", WaitForStage: client.WorkflowUpdateStageCompleted})
	require.NoError(t, err)
	var answer string
	require.NoError(t, h.Get(ctx, &answer))
	assert.Equal(t, "own escalate", answer)
	require.NoError(t, c.SignalWorkflow(ctx, id, "", "halt", nil)) // already halted: the workflow's
	require.NoError(t, c.SignalWorkflow(ctx, id, "", "resume", map[string]string{"by": "e2e"}))
	var res scripted.OwnSignalsResult
	require.NoError(t, run.Get(ctx, &res))
	assert.Equal(t, 5, res.Loop.Calls)
	assert.Equal(t, 1, res.Resumed)
	assert.Equal(t, 1, res.Halted)
	assert.Equal(t, scripted.OwnDetails, res.Details)
	healthyScripted(t, ctx, c, id)
}

func TestRealServerSelectorOverEscalatedChild(t *testing.T) {
	ctx, c, queue := safetyServer(t, interceptor.Options{})
	id := queue + "-wf"
	run := startScripted(t, ctx, c, queue, id, scripted.ChildLoop, distinctTurns(2, "Plan"), 6)
	waitStatus(t, ctx, c, id, func(s interceptor.Status) bool { return s.State == interceptor.StateHalted })
	require.NoError(t, c.SignalWorkflow(ctx, id, "", interceptor.DefaultEscalateSignal, map[string]string{"reason": "enough children"}))
	var res loopResult
	require.NoError(t, run.Get(ctx, &res))
	assert.True(t, res.Escalated)
	assert.Equal(t, "enough children", res.Reason)
	assert.Equal(t, 4, res.Calls)
	healthyScripted(t, ctx, c, id)
}

func TestRealServerObserveAndFailEndCleanly(t *testing.T) {
	for _, policy := range []interceptor.OnHalt{interceptor.OnHaltObserve, interceptor.OnHaltFail} {
		t.Run(string(policy), func(t *testing.T) {
			ctx, c, queue := safetyServer(t, interceptor.Options{OnHalt: policy})
			id := queue + "-wf"
			run := startScripted(t, ctx, c, queue, id, scriptLoop, repeat(9, "Code", "same"))
			var res loopResult
			require.NoError(t, run.Get(ctx, &res))
			h := healthyScripted(t, ctx, c, id)
			s := waitStatus(t, ctx, c, id, func(interceptor.Status) bool { return true })
			assert.Equal(t, s.Halts, signalsNamed(h, interceptor.DefaultHaltedSignal), "every loop.halted is in history before the workflow ends")
			assert.Positive(t, s.Halts)
		})
	}
}

// distinctTurns returns n calls of node with different outputs.
func distinctTurns(n int, node string) []turn {
	ts := make([]turn, n)
	for i := range ts {
		ts[i] = turn{Node: node, Output: fmt.Sprintf("%s-%d", node, i)}
	}
	return ts
}
