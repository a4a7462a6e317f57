package watch

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchMendsItsPauseOnAnUnstartedTask: where the watcher's pause
// lost the race and failed a workflow task before it started (made here
// by pausing, with the watcher's request id, a run whose task waits with
// no worker polling), the watcher resets the paused run to that failure:
// the reset run keeps every event before it, so no completed call runs
// again, its history has no task failed before its start (what the
// TypeScript SDK cannot replay), and the watcher pauses it again. A run an
// operator paused the same way is left alone (reported, not reset).
// Fails before pausepoint.go: nothing is reset.
func TestWatchMendsItsPauseOnAnUnstartedTask(t *testing.T) {
	ctx := testContext(t, time.Minute)
	ts := startServer(t, true)
	const queue = "mend"
	start := ts.starter(t, queue)
	lone := start()
	runs := map[string]string{}
	for _, id := range []string{"mine", "theirs"} {
		runs[id] = ts.agent(t, ctx, id, queue, activities.ParallelStuck).GetRunID()
		eventually(t, ctx, id+" to loop past its halt", func() bool {
			return len(analyse(t, ts.history(t, ctx, id, "")).halts()) > 0
		})
	}
	lone.Stop()
	for _, tc := range []struct{ id, requestID string }{
		{"mine", PauseRequestID("mine", runs["mine"], analyse(t, ts.history(t, ctx, "mine", "")).halts()[0].Verdict.Halt.Seq)},
		{"theirs", "an-operator-1"},
	} {
		if err := ts.c.SignalWorkflow(ctx, tc.id, "", "nudge", nil); err != nil {
			t.Fatal(err)
		}
		eventually(t, ctx, tc.id+"'s task to wait", func() bool {
			return ts.describe(t, ctx, tc.id, "").GetPendingWorkflowTask().GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED
		})
		eventually(t, ctx, tc.id+"'s calls to end", func() bool { return callsRunning(ts.describe(t, ctx, tc.id, "")) == 0 })
		if _, err := ts.c.WorkflowService().PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
			Namespace: "default", WorkflowId: tc.id, Identity: "test", Reason: "lost race", RequestId: tc.requestID,
		}); err != nil {
			t.Fatal(err)
		}
	}
	base := ts.history(t, ctx, "mine", runs["mine"])
	failed := failedBeforeStart(base)
	if failed == 0 {
		t.Fatal("the pause failed no task before its start")
	}

	logger, logs := observed()
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range logs.All() {
				t.Log(l.Message, l.ContextMap())
			}
			for _, e := range base[max(len(base)-6, 0):] {
				t.Log(e.GetEventId(), e.GetEventType())
			}
		}
	})
	w, _ := ts.watcher(t, Options{Query: `TaskQueue="mend"`, Logger: logger})
	// The reset closes the followed run, which then leaves the status:
	// the reset run is the workflow's current one.
	var mended string
	eventually(t, ctx, "the watcher to mend its pause", func() bool {
		mended = ts.describe(t, ctx, "mine", "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
		return mended != runs["mine"]
	})
	if n := len(logs.FilterMessageSnippet("reset the run to that task").All()); n != 1 {
		t.Errorf("%d mends logged, want 1", n)
	}
	defer start().Stop()
	// The pause of the reset run may fail a task before its start too,
	// and be mended in turn (at most maxMends times): the current run is
	// the one paused.
	eventually(t, ctx, "the reset run paused again", func() bool {
		d := ts.describe(t, ctx, "mine", "")
		if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED {
			return false
		}
		mended = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		return true
	})
	reset := ts.history(t, ctx, "mine", mended)
	for i, e := range base {
		if e.GetEventId() >= failed {
			break
		}
		if i >= len(reset) || reset[i].GetEventType() != e.GetEventType() {
			t.Fatalf("the reset run differs from the base at event %d", e.GetEventId())
		}
	}
	// No call that completed before the failure runs again.
	completed := map[int64]bool{}
	for _, e := range base {
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && e.GetEventId() < failed {
			completed[a.GetScheduledEventId()] = true
		}
	}
	for _, e := range reset {
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && e.GetEventId() > failed && completed[a.GetScheduledEventId()] {
			t.Errorf("call %d completed before the pause and ran again in the reset run", a.GetScheduledEventId())
		}
	}
	if f := failedBeforeStart(reset); f != 0 && f < failed {
		t.Errorf("the reset run keeps the task failed before its start (event %d)", f)
	}
	// The operator's pause is left to the operator.
	if d := ts.describe(t, ctx, "theirs", ""); d.GetWorkflowExecutionInfo().GetExecution().GetRunId() != runs["theirs"] ||
		d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED {
		t.Errorf("the operator's paused run was touched: %v", d.GetWorkflowExecutionInfo())
	}
	eventually(t, ctx, "the operator's harmed pause reported", func() bool {
		for _, e := range w.Status().Executions {
			if e.WorkflowID == "theirs" && len(e.UnstartedTaskFailed) == 1 {
				if e.Mended != "" {
					t.Errorf("the operator's pause was mended: %+v", e)
				}
				return true
			}
		}
		return false
	})
	for _, id := range []string{"mine", "theirs"} {
		_ = ts.c.TerminateWorkflow(context.Background(), id, "", "test over")
	}
}

// failedBeforeStart is the first workflow task a pause failed before it
// started, 0 if none.
func failedBeforeStart(events []*historypb.HistoryEvent) int64 {
	for _, e := range events {
		if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED {
			return e.GetEventId()
		}
	}
	return 0
}

// starter returns a function that starts a worker without the interceptor
// on queue, for tests that stop and start it.
func (ts *testServer) starter(t *testing.T, queue string) func() worker.Worker {
	return func() worker.Worker {
		w := worker.New(ts.c, queue, worker.Options{})
		workflows.Register(w)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
}
