package typescript_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/worker/e2e/typescript"
	"github.com/loopguard/loopguard/worker/watch"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchPausesHarmNoTypeScriptRun: LOOPGUARD_TS_WATCH_PAUSES looping
// TypeScript agents (default 2) with model turns of 0 ms, followed by one
// watcher, are all paused by it; then each is unpaused and every one goes
// on (a call completes after the unpause, or it ends). It reports the
// workflow tasks the pauses failed before their start and the runs the
// watcher mended:
//
//	LOOPGUARD_TS_WATCH_PAUSES=100 go test ./worker/e2e/typescript -run TestWatchPausesHarmNoTypeScriptRun -v -timeout 30m
func TestWatchPausesHarmNoTypeScriptRun(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	n, _ := strconv.Atoi(os.Getenv("LOOPGUARD_TS_WATCH_PAUSES"))
	if n <= 0 {
		n = 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute+time.Duration(n)*5*time.Second)
	defer cancel()
	srv, c := pauseServer(t)
	const queue = "ts-harmless"
	w, err := typescript.StartWith(ctx, t, typescript.Options{HostPort: srv.FrontendHostPort(), Namespace: srv.Namespace(), TaskQueue: queue})
	require.NoError(t, err)
	watcher := startWatcher(ctx, t, c, srv.Namespace(), queue)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("ts-harmless-%d", i)
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: ids[i], TaskQueue: queue},
			workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 3, MaxTurns: 200})
		require.NoError(t, err)
	}
	describe := func(id string) *workflowservice.DescribeWorkflowExecutionResponse {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		require.NoError(t, err)
		return d
	}
	for _, id := range ids {
		require.Eventually(t, func() bool {
			d := describe(id)
			return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED &&
				strings.HasPrefix(d.GetWorkflowExtendedInfo().GetPauseInfo().GetIdentity(), watch.PauseIdentity)
		}, 3*time.Minute, 100*time.Millisecond, "%s not paused by the watcher\n%s", id, w.Output())
	}
	lagOf(t, watcher.Status(), ids)
	failed, mended, stuck := 0, 0, 0
	for _, id := range ids {
		l, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: srv.Namespace(), Query: fmt.Sprintf("WorkflowId=%q", id)})
		require.NoError(t, err)
		for _, e := range l.GetExecutions() {
			h, err := history.ExportHistory(ctx, c, id, e.GetExecution().GetRunId())
			require.NoError(t, err)
			for _, ev := range h.GetEvents() {
				switch a := ev.GetWorkflowTaskFailedEventAttributes(); {
				case a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED:
					failed++
				case a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW && strings.HasPrefix(a.GetFailure().GetMessage(), "loopguard-watch: mend") &&
					e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
					// A reset run keeps the mends before it: counted in
					// the one the last mend made, the running one.
					mended++
				}
			}
		}
	}
	for _, id := range ids {
		runID := describe(id).GetWorkflowExecutionInfo().GetExecution().GetRunId()
		completed := func() int {
			h, err := history.ExportHistory(ctx, c, id, runID)
			require.NoError(t, err)
			return count(h, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
		}
		before := completed()
		unpause(ctx, t, c, srv.Namespace(), id, runID, "go-on-"+runID)
		goesOn := func() bool {
			d, err := c.DescribeWorkflowExecution(ctx, id, runID)
			require.NoError(t, err)
			return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED || completed() > before
		}
		deadline := time.Now().Add(30 * time.Second)
		for !goesOn() && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if !goesOn() {
			stuck++
			t.Errorf("%s (run %s) does not go on after its unpause", id, runID)
		}
		_ = c.TerminateWorkflow(context.Background(), id, "", "test over")
	}
	st := watcher.Status()
	t.Logf("%d paused TypeScript executions, model turns of 0 ms: %d workflow tasks failed before they started, %d runs mended, %d stuck after the unpause; %d pauses, %d of them ahead of their halt, %d undone",
		n, failed, mended, stuck, st.Pauses, st.Ahead, st.Undone)
}

// lagOf logs the lag of the watcher's pauses of the executions ids, as
// worker/watch's TestWatchLag does for Go agents: from the tripping
// call's event to the pause, and the calls scheduled between them, of
// each execution's first halt its own pause answered.
func lagOf(t *testing.T, st watch.Status, ids []string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var lags []time.Duration
	var calls []int
	for _, e := range st.Executions {
		if !want[e.WorkflowID] {
			continue
		}
		for _, h := range e.Halts {
			if h.Action == "pause" && !h.PausedAt.IsZero() && !h.TrippedAt.IsZero() {
				lags = append(lags, h.PausedAt.Sub(h.TrippedAt))
				calls = append(calls, h.CallsBefore)
				break
			}
		}
	}
	if len(lags) == 0 {
		t.Logf("lag: no pause of the watcher's own listed")
		return
	}
	slices.Sort(lags)
	slices.Sort(calls)
	at := func(q float64) int { return min(int(q*float64(len(lags))), len(lags)-1) }
	t.Logf("lag over %d pauses: median %v, p99 %v, max %v; calls scheduled in the lag: median %d, p99 %d, max %d",
		len(lags), lags[at(0.5)].Round(time.Millisecond), lags[at(0.99)].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond),
		calls[at(0.5)], calls[at(0.99)], calls[len(calls)-1])
}
