package watch

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/loopguard/loopguard/activities"
)

// TestWatchWaitsForTheTaskToStart: a pause that finds a workflow task
// scheduled but not started fails that task, which the TypeScript SDK
// cannot replay (worker/e2e/typescript). The watcher holds its pause while
// a task waits to start and pauses once a worker has started it; a pause
// someone else makes at that moment is reported with the reset that
// mends the run.
func TestWatchWaitsForTheTaskToStart(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	ts := startServer(t, true)
	const queue = "lone"
	start := ts.starter(t, queue)
	lone := start()
	waits := ts.agent(t, ctx, "waits", queue, activities.ParallelStuck)
	ts.agent(t, ctx, "wedged", queue, activities.ParallelStuck)
	for _, id := range []string{"waits", "wedged"} {
		eventually(t, ctx, id+" to loop past its halt", func() bool {
			return len(analyse(t, ts.history(t, ctx, id, "")).halts()) > 0
		})
	}
	// No worker polls: a signal leaves a workflow task scheduled, never
	// started. Stop returns before the tasks in flight finish (the SDK's
	// WorkerStopTimeout is 0 by default), and a task the stopping worker
	// still completes can take the signal with it: the test signals again
	// while no task is pending.
	lone.Stop()
	for _, id := range []string{"waits", "wedged"} {
		var last *workflowservice.DescribeWorkflowExecutionResponse
		t.Cleanup(func() {
			if t.Failed() && last != nil {
				t.Logf("%s as last described: %v; pending task %v", id, last.GetWorkflowExecutionInfo().GetStatus(), last.GetPendingWorkflowTask())
			}
		})
		eventually(t, ctx, id+"'s task to wait", func() bool {
			last = ts.describe(t, ctx, id, "")
			if last.GetPendingWorkflowTask() == nil {
				if err := ts.c.SignalWorkflow(ctx, id, "", "nudge", nil); err != nil {
					t.Fatal(err)
				}
				return false
			}
			return last.GetPendingWorkflowTask().GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED
		})
	}
	// Someone pauses "wedged" now: its waiting task fails.
	if _, err := ts.c.WorkflowService().PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: "wedged", Identity: "an operator", Reason: "maintenance", RequestId: "op-1",
	}); err != nil {
		t.Fatal(err)
	}

	// The task that waits: the newest scheduled.
	var waiting int64
	for _, e := range ts.history(t, ctx, "waits", waits.GetRunID()) {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED {
			waiting = e.GetEventId()
		}
	}

	w, _ := ts.watcher(t, Options{Query: `TaskQueue="lone"`})
	eventually(t, ctx, "the watcher to see both halts", func() bool {
		n := 0
		for _, e := range w.Status().Executions {
			if len(e.Halts) > 0 {
				n++
			}
		}
		return n == 2
	})
	time.Sleep(2 * time.Second) // ten listings, each with a chance to pause
	if s := ts.describe(t, ctx, "waits", "").GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("paused while its task waited to start: status %v", s)
	}
	var report ExecutionStatus
	for _, e := range w.Status().Executions {
		if e.WorkflowID == "wedged" {
			report = e
		}
	}
	if len(report.UnstartedTaskFailed) != 1 || report.ResetTo == 0 || report.ResetTo != report.UnstartedTaskFailed[0] {
		t.Errorf("the operator's pause failed a waiting task: status %+v", report)
	}

	// A worker starts the task: the watcher pauses, and fails no task.
	defer start().Stop()
	eventually(t, ctx, "the pause once the task started", func() bool {
		return ts.describe(t, ctx, "waits", "").GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
	})
	events := ts.history(t, ctx, "waits", waits.GetRunID())
	started := false
	for _, e := range events {
		// A task scheduled on the stopped worker's sticky queue times out
		// there and is scheduled again on the queue: the task that waits
		// is then the one scheduled next.
		if a := e.GetWorkflowTaskTimedOutEventAttributes(); a.GetScheduledEventId() == waiting && a.GetTimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
			waiting = -1
		}
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED && waiting == -1 {
			waiting = e.GetEventId()
		}
		if e.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId() == waiting {
			started = true
		}
		if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED {
			if e.GetWorkflowTaskFailedEventAttributes().GetScheduledEventId() == waiting {
				t.Fatalf("the watcher's pause failed the waiting workflow task %d before it started", waiting)
			}
			// A task scheduled after the describe that let the pause go
			// (the window docs/watch.md states): not this test's point.
			t.Logf("a later task (event %d) was scheduled between the describe and the pause", e.GetEventId())
		}
	}
	if !started {
		t.Errorf("the waiting task %d never started", waiting)
		for _, e := range events[max(len(events)-20, 0):] {
			t.Logf("%d %v", e.GetEventId(), e.GetEventType())
		}
	}
	if n := count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 1 {
		t.Errorf("%d Paused events, want 1", n)
	}
	for _, id := range []string{"waits", "wedged"} {
		_ = ts.c.TerminateWorkflow(context.Background(), id, "", "test over")
	}
}
