package watch

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchPausesHarmNoRun: LOOPGUARD_WATCH_PAUSES looping Go agents
// (default 4) with tools that take no time, followed by one watcher, are
// all paused; then each is unpaused, and every one goes on (a call
// completes after the unpause). It reports the workflow tasks the
// watcher's pauses failed before they started and the runs it mended:
//
//	LOOPGUARD_WATCH_PAUSES=100 go test ./worker/watch -run TestWatchPausesHarmNoRun -v -timeout 20m
func TestWatchPausesHarmNoRun(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LOOPGUARD_WATCH_PAUSES"))
	if n <= 0 {
		n = 4
	}
	ctx := testContext(t, 3*time.Minute+time.Duration(n)*5*time.Second)
	ts := startServer(t, true)
	ts.watcher(t, Options{})
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("safe-%d", i)
		if _, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: ids[i], TaskQueue: plainQueue},
			workflows.ParallelToolAgent, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 4, MaxTurns: 10000}); err != nil {
			t.Fatal(err)
		}
	}
	// Paused by the watcher: a mended run's reset run is paused again.
	pausedByWatcher := func(id string) bool {
		d := ts.describe(t, ctx, id, "")
		return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED &&
			strings.HasPrefix(d.GetWorkflowExtendedInfo().GetPauseInfo().GetIdentity(), PauseIdentity)
	}
	for _, id := range ids {
		eventually(t, ctx, id+" paused", func() bool { return pausedByWatcher(id) })
	}
	failed, mended := 0, 0
	for _, id := range ids {
		l, err := ts.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: fmt.Sprintf("WorkflowId=%q", id)})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l.GetExecutions() {
			for _, ev := range ts.history(t, ctx, id, e.GetExecution().GetRunId()) {
				switch a := ev.GetWorkflowTaskFailedEventAttributes(); {
				case a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED:
					failed++
				case a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW && strings.HasPrefix(a.GetFailure().GetMessage(), mendReason) &&
					e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
					// A reset run keeps the mends before it: counted in
					// the one the last mend made, the running one.
					mended++
				}
			}
		}
	}
	// Every run goes on after its unpause.
	stuck := 0
	for _, id := range ids {
		d := ts.describe(t, ctx, id, "")
		runID := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		before := count(ts.history(t, ctx, id, runID), enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
		if _, err := ts.c.WorkflowService().UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
			Namespace: "default", WorkflowId: id, RunId: runID, Identity: "test", Reason: "go on", RequestId: "go-on-" + runID,
		}); err != nil {
			t.Fatal(err)
		}
		goesOn := func() bool {
			return count(ts.history(t, ctx, id, runID), enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) > before
		}
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		for !goesOn() && wait.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		if !goesOn() {
			stuck++
			t.Errorf("%s (run %s) does not go on after its unpause", id, runID)
		}
		_ = ts.c.TerminateWorkflow(context.Background(), id, "", "test over")
	}
	t.Logf("%d paused executions, tools of 0 ms: %d workflow tasks failed before they started, %d runs mended, %d stuck after the unpause",
		n, failed, mended, stuck)
}
