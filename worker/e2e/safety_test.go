package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
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
	for _, g := range []interceptor.Options{{}, {RepeatThreshold: 2, OnHalt: protocol.OnHaltFail}} {
		require.NoError(t, testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: g, Register: scripted.RegisterWorkflows}))
	}
	return h
}

func TestRealServerParallelBranchesShareOneHalt(t *testing.T) {
	for _, decision := range []string{"resume", "escalate"} {
		t.Run(decision, func(t *testing.T) {
			ctx, c, queue := safetyServer(t, interceptor.Options{})
			id := queue + "-wf"
			// Both branches repeat, so the Code/Verify loop they form
			// stalls; the other branch calls on in the same workflow tasks
			// and meets the same pending trip.
			run := startScripted(t, ctx, c, queue, id, scripted.TwoBranches, repeat(5, "Code", "same"), repeat(5, "Verify", "same verdict"))
			s := waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted })
			assert.Equal(t, 1, s.Halts)
			// Until the decision, the pause shows and no second halt comes.
			waitEvents(t, ctx, c, id, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, 1)
			for range 5 {
				s = waitStatus(t, ctx, c, id, func(protocol.Status) bool { return true })
				assert.Equal(t, protocol.StateHalted, s.State)
				assert.Equal(t, 1, s.Halts, "one trip, one halt")
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, c.SignalWorkflow(ctx, id, "", decision, map[string]string{"by": "e2e"}))
			var res []loopResult
			require.NoError(t, answerLaterHalts(ctx, c, run, 1, decision, &res), "one decision releases every branch")
			require.Len(t, res, 2)
			if decision == "resume" {
				assert.Equal(t, []int{5, 5}, []int{res[0].Calls, res[1].Calls})
			} else {
				assert.True(t, res[0].Escalated)
				// The Verify branch is escalated if it was waiting; it may
				// have finished first (the deterministic case is in the
				// unit tests and the v4-parallel-escalate-both fixture).
				assert.True(t, res[1].Escalated || res[1].Calls == 5, "%+v", res[1])
			}
			h := healthyScripted(t, ctx, c, id)
			final := waitStatus(t, ctx, c, id, func(protocol.Status) bool { return true })
			assert.Equal(t, final.Halts, signalsNamed(h, protocol.DefaultHaltedSignal), "one loop.halted per halt")
		})
	}
}

func TestRealServerCancelWhilePaused(t *testing.T) {
	ctx, c, queue := safetyServer(t, interceptor.Options{})
	id := queue + "-wf"
	run := startScripted(t, ctx, c, queue, id, scriptLoop, repeat(6, "Code", "same"))
	waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted })
	require.NoError(t, c.CancelWorkflow(ctx, id, ""))
	err := run.Get(ctx, nil)
	var canceled *temporal.CanceledError
	require.True(t, errors.As(err, &canceled), "the workflow ends canceled, got %v", err)
	s := waitStatus(t, ctx, c, id, func(protocol.Status) bool { return true })
	assert.Equal(t, protocol.StateRunning, s.State, "not escalated")
	require.NotNil(t, s.LastDecision)
	assert.Equal(t, protocol.ActionCancel, s.LastDecision.Action)
	h := healthyScripted(t, ctx, c, id)
	events := h.GetEvents()
	assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, events[len(events)-1].GetEventType())
}

func TestRealServerSignalWithStartHalt(t *testing.T) {
	ctx, c, queue := safetyServer(t, interceptor.Options{})
	id := queue + "-wf"
	run, err := c.SignalWithStartWorkflow(ctx, id, protocol.DefaultHaltSignal, map[string]string{"by": "ana", "reason": "hold it"},
		client.StartWorkflowOptions{TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute}, scriptLoop, distinctTurns(3, "Plan"))
	require.NoError(t, err)
	s := waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted })
	require.NotNil(t, s.Halt)
	assert.Equal(t, protocol.ReasonUserStop, s.Halt.HaltReason)
	assert.Contains(t, s.Halt.Message, "ana asked to stop: hold it")
	require.NoError(t, c.SignalWorkflow(ctx, id, "", protocol.DefaultEscalateSignal, nil))
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
	waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted })
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
	waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted })
	require.NoError(t, c.SignalWorkflow(ctx, id, "", protocol.DefaultEscalateSignal, map[string]string{"reason": "enough children"}))
	var res loopResult
	require.NoError(t, run.Get(ctx, &res))
	assert.True(t, res.Escalated)
	assert.Equal(t, "enough children", res.Reason)
	assert.Equal(t, 4, res.Calls)
	healthyScripted(t, ctx, c, id)
}

func TestRealServerObserveAndFailEndCleanly(t *testing.T) {
	for _, policy := range []protocol.OnHalt{protocol.OnHaltObserve, protocol.OnHaltFail} {
		t.Run(string(policy), func(t *testing.T) {
			ctx, c, queue := safetyServer(t, interceptor.Options{OnHalt: policy})
			id := queue + "-wf"
			run := startScripted(t, ctx, c, queue, id, scriptLoop, repeat(9, "Code", "same"))
			var res loopResult
			require.NoError(t, run.Get(ctx, &res))
			h := healthyScripted(t, ctx, c, id)
			s := waitStatus(t, ctx, c, id, func(protocol.Status) bool { return true })
			assert.Equal(t, s.Halts, signalsNamed(h, protocol.DefaultHaltedSignal), "every loop.halted is in history before the workflow ends")
			assert.Positive(t, s.Halts)
			if policy == protocol.OnHaltObserve {
				// The observed call goes on in the task that raised the
				// halt: it does not wait a workflow task for the echo.
				assert.Equal(t, s.Halts, callsRightAfterHalt(h), "calls scheduled in the same task as the halt's marker")
			}
		})
	}
}

// answerLaterHalts waits for run's result, answering with decision any halt
// after the first answered ones: the order in which two branches' calls
// reach the guard can lead the detectors to a later trip of their own.
func answerLaterHalts(ctx context.Context, c client.Client, run client.WorkflowRun, answered int, decision string, into any) error {
	done := make(chan error, 1)
	go func() { done <- run.Get(ctx, into) }()
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(100 * time.Millisecond):
		}
		v, err := c.QueryWorkflow(ctx, run.GetID(), "", protocol.DefaultStatusQuery)
		if err != nil {
			continue
		}
		var s protocol.Status
		if v.Get(&s) == nil && s.State == protocol.StateHalted && s.Halts > answered {
			if err := c.SignalWorkflow(ctx, run.GetID(), "", decision, nil); err != nil {
				return err
			}
			answered = s.Halts
		}
	}
}

// TestRealServerResetReappliesOldEcho resets a workflow that halted (and
// ended, OnHalt: fail) to its first workflow task. The server re-applies
// the old run's loop.halted echo to the new run, which halts again and
// waits for its echoes before it ends: the stale echo must neither reach
// the workflow nor wedge it, and the new run's history must replay.
func TestRealServerResetReappliesOldEcho(t *testing.T) {
	ctx, c, queue := safetyServer(t, interceptor.Options{OnHalt: protocol.OnHaltFail})
	id := queue + "-wf"
	run := startScripted(t, ctx, c, queue, id, scriptLoop, repeat(6, "Code", "same"))
	var res loopResult
	require.NoError(t, run.Get(ctx, &res))
	require.True(t, res.Escalated)

	var firstTask int64
	for _, e := range exportHistory(t, ctx, c, id, run.GetRunID()).GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			firstTask = e.GetEventId()
			break
		}
	}
	reset, err := c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 sharedServer(t).Namespace(),
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: id, RunId: run.GetRunID()},
		Reason:                    "e2e: replay the loop from the start",
		WorkflowTaskFinishEventId: firstTask,
		RequestId:                 id + "-reset",
	})
	require.NoError(t, err)
	newRun := c.GetWorkflow(ctx, id, reset.GetRunId())
	var again loopResult
	require.NoError(t, newRun.Get(ctx, &again), "the reset run ends")
	assert.True(t, again.Escalated)

	h := exportHistory(t, ctx, c, id, reset.GetRunId())
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil && a.GetCause() != enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW {
			t.Errorf("event %d: workflow task failed: %s: the stale echo let the run end before its own echo", e.GetEventId(), a.GetCause())
		}
	}
	assert.Equal(t, 2, signalsNamed(h, protocol.DefaultHaltedSignal), "the old run's echo, re-applied, and the new run's")
	for _, g := range []interceptor.Options{{}, {OnHalt: protocol.OnHaltFail}} {
		require.NoError(t, testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: g, Register: scripted.RegisterWorkflows}))
	}
}

// callsRightAfterHalt counts the loop.halted local activity markers that
// the next call follows in the same workflow task completion.
func callsRightAfterHalt(h *historypb.History) int {
	n := 0
	events := h.GetEvents()
	for i, e := range events {
		if e.GetMarkerRecordedEventAttributes().GetMarkerName() != "LocalActivity" {
			continue
		}
	next:
		for _, f := range events[i+1:] {
			switch f.GetEventType() {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				n++
				break next
			case enumspb.EVENT_TYPE_MARKER_RECORDED, enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
				enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			default:
				break next
			}
		}
	}
	return n
}

// distinctTurns returns n calls of node with different outputs.
func distinctTurns(n int, node string) []turn {
	ts := make([]turn, n)
	for i := range ts {
		ts[i] = turn{Node: node, Output: fmt.Sprintf("%s-%d", node, i)}
	}
	return ts
}
