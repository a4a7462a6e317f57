package typescript_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/worker/e2e/typescript"
	"github.com/loopguard/loopguard/worker/watch"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchPausesTypeScriptLoop: the watcher follows TypeScript agents
// it cannot redeploy: it pauses the looping one at the halt the analysis
// of its history afterwards finds (same call, detector and node), leaves
// the progressing one alone; an operator's unpause resumes the loop, which
// the watcher pauses again at its next halt, unless the first pause landed
// on a workflow task not yet started, which the TypeScript SDK cannot go
// on from (TestPauseBeforeWorkflowTaskStarted); a terminate ends it.
func TestWatchPausesTypeScriptLoop(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	srv, c := pauseServer(t)
	const queue = "ts-watched"
	w, err := typescript.StartWith(ctx, t, typescript.Options{HostPort: srv.FrontendHostPort(), Namespace: srv.Namespace(),
		TaskQueue: queue, ModelLatency: 200 * time.Millisecond})
	require.NoError(t, err)
	watcher := startWatcher(ctx, t, c, srv.Namespace(), queue)

	start := func(id, scenario string) client.WorkflowRun {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
			workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: scenario, Width: 3, MaxTurns: 200})
		require.NoError(t, err)
		return run
	}
	stuck := start("ts-stuck", activities.ParallelStuck)
	prog := start("ts-progressing", activities.ParallelProgressing)
	paused := func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, "ts-stuck", stuck.GetRunID())
		require.NoError(t, err)
		return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
	}
	require.Eventually(t, paused, 2*time.Minute, 50*time.Millisecond, "the watcher does not pause the TypeScript loop\n%s", w.Output())
	d, err := c.DescribeWorkflowExecution(ctx, "ts-stuck", stuck.GetRunID())
	require.NoError(t, err)
	info := d.GetWorkflowExtendedInfo().GetPauseInfo()
	require.True(t, strings.HasPrefix(info.GetReason(), "loopguard: "), info.GetReason())
	require.True(t, strings.HasPrefix(info.GetIdentity(), watch.PauseIdentity), info.GetIdentity())

	var res workflows.ParallelResult
	require.NoError(t, prog.Get(ctx, &res))
	require.Equal(t, workflows.OutcomeCompleted, res.Outcome)
	require.Zero(t, count(export(ctx, t, c, "ts-progressing"), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED))

	// The analysis of the history afterwards finds the halt the watcher
	// paused for, and the pause is the watcher's request for it.
	h := export(ctx, t, c, "ts-stuck")
	after := analyze(t, h)
	require.NotEmpty(t, after.Halts())
	var first *historypb.WorkflowExecutionPausedEventAttributes
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowExecutionPausedEventAttributes(); a != nil && first == nil {
			first = a
		}
	}
	halt := after.Halts()[0]
	require.Equal(t, watch.PauseRequestID("ts-stuck", stuck.GetRunID(), halt.Seq), first.GetRequestId())
	var st watch.ExecutionStatus
	for _, e := range watcher.Status().Executions {
		if e.WorkflowID == "ts-stuck" {
			st = e
		}
	}
	require.NotEmpty(t, st.Halts, "%+v", watcher.Status())
	v := after.Verdicts[indexHalt(after.Verdicts)]
	require.Equal(t, []any{v.Call, string(v.Halt.Detector), v.Halt.Node}, []any{st.Halts[0].Call, st.Halts[0].Detector, st.Halts[0].Node})
	t.Logf("the watcher paused the TypeScript loop at call %d (%s on %s); %d calls scheduled between the trip and the pause",
		st.Halts[0].Call, st.Halts[0].Detector, st.Halts[0].Node, st.Halts[0].CallsBefore)

	wedged := false
	for _, e := range h.GetEvents() {
		if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED {
			wedged = true
		}
	}
	unpause(ctx, t, c, srv.Namespace(), "ts-stuck", stuck.GetRunID(), "operator-unpause-1")
	if wedged {
		t.Log("the pause landed on a workflow task not yet started: the TypeScript run cannot go on after the unpause")
		require.Eventually(t, func() bool { return strings.Contains(w.Output(), "WorkflowTaskMachine in state Scheduled") },
			time.Minute, 100*time.Millisecond)
	} else {
		// The resume starts the judgement over: the loop runs its full
		// count again and is paused at its next halt.
		require.Eventually(t, func() bool {
			return count(export(ctx, t, c, "ts-stuck"), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED) == 2
		}, 2*time.Minute, 100*time.Millisecond, "the resumed TypeScript loop is not paused again\n%s", w.Output())
	}

	require.NoError(t, c.TerminateWorkflow(ctx, "ts-stuck", stuck.GetRunID(), "the test ends the loop"))
	var term *temporal.TerminatedError
	require.ErrorAs(t, stuck.Get(ctx, nil), &term)
}

func indexHalt(vs []interceptor.Verdict) int {
	for i, v := range vs {
		if v.Halt != nil {
			return i
		}
	}
	return -1
}
