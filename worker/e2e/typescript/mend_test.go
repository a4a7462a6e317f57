package typescript_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/e2e/typescript"
	"github.com/loopguard/loopguard/worker/watch"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchMendsTypeScriptRun: a watcher's pause that failed a TypeScript
// run's workflow task before it started (made here as it happens in the
// race: the watcher's request id, a task waiting with no worker) is
// mended while the run is paused: the reset to the failed task keeps every
// call that completed, and the TypeScript SDK replays the reset run and
// goes on (a TypeScript worker cannot go on from the pause itself:
// TestPauseBeforeWorkflowTaskStarted). Fails before worker/watch's
// pausepoint.go: nothing resets the run.
func TestWatchMendsTypeScriptRun(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv, c := pauseServer(t)
	const id = "ts-mend"
	run := loopWithWaitingTask(ctx, t, srv, c, id)
	pause(ctx, t, c, srv.Namespace(), id, "", watch.PauseRequestID(id, run.GetRunID(), 1))
	failed := int64(0)
	completed := map[int64]bool{}
	for _, e := range export(ctx, t, c, id).GetEvents() {
		if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED {
			failed = e.GetEventId()
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			completed[a.GetScheduledEventId()] = true
		}
	}
	require.NotZero(t, failed, "the pause failed no workflow task")

	startWatcher(ctx, t, c, srv.Namespace(), id)
	var mended string
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		require.NoError(t, err)
		mended = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		return mended != run.GetRunID()
	}, time.Minute, 50*time.Millisecond, "the watcher does not mend its pause")

	w2, err := typescript.Start(ctx, t, srv.FrontendHostPort(), srv.Namespace(), id)
	require.NoError(t, err)
	// The reset run goes on: calls after the reset point complete.
	require.Eventually(t, func() bool {
		h, err := history.ExportHistory(ctx, c, id, mended)
		require.NoError(t, err)
		n := 0
		for _, e := range h.GetEvents() {
			if e.GetEventId() > failed && e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
				n++
			}
		}
		return n >= 3
	}, time.Minute, 100*time.Millisecond, "the reset run does not go on\n%s", w2.Output())
	h, err := history.ExportHistory(ctx, c, id, mended)
	require.NoError(t, err)
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && e.GetEventId() > failed && completed[a.GetScheduledEventId()] {
			t.Errorf("call %d completed before the pause and ran again", a.GetScheduledEventId())
		}
	}
	_ = c.TerminateWorkflow(context.Background(), id, "", "done")
}

// loopWithWaitingTask starts a stuck TypeScript loop on queue id, lets it
// complete 4 workflow tasks, stops its worker and signals it: its next
// workflow task waits, scheduled and not started.
func loopWithWaitingTask(ctx context.Context, t *testing.T, srv *devserver.Server, c client.Client, id string) client.WorkflowRun {
	t.Helper()
	w, err := typescript.Start(ctx, t, srv.FrontendHostPort(), srv.Namespace(), id)
	require.NoError(t, err)
	run := startLoop(ctx, t, c, id, id, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, 4)
	require.NoError(t, w.Stop())
	require.NoError(t, c.SignalWorkflow(ctx, id, "", "nudge", nil))
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, id, run.GetRunID())
		require.NoError(t, err)
		return d.GetPendingWorkflowTask().GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED
	}, time.Minute, 50*time.Millisecond)
	return run
}

// startWatcher runs a watcher of queue's executions until the test ends.
func startWatcher(ctx context.Context, t *testing.T, c client.Client, namespace, queue string) *watch.Watcher {
	t.Helper()
	watcher, err := watch.New(watch.Options{Client: c, Namespace: namespace, Query: `TaskQueue="` + queue + `"`,
		Guard: workflows.ParallelGuardOptions(), PollInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan error, 1)
	go func() { watched <- watcher.Run(watchCtx) }()
	t.Cleanup(func() {
		stopWatch()
		<-watched
	})
	return watcher
}
