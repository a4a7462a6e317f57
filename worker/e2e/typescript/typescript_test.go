package typescript_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/worker/e2e/typescript"
	"github.com/loopguard/loopguard/workflows"
)

// pauseServer is the embedded server with Temporal's Workflow Pause on.
func pauseServer(t *testing.T) (*devserver.Server, client.Client) {
	t.Helper()
	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true,
		DynamicConfig: map[string]any{"frontend.WorkflowPauseEnabled": true}})
	return srv, devtest.NewClient(t, srv)
}

// TestTypeScriptAgentUnderWorkflowPause: the TypeScript agent's looping
// workflow makes parallel tool calls, its progressing one completes; a
// Workflow Pause stops the loop from scheduling anything, an unpause lets
// it go on, a terminate ends it; and the analysis halts the loop, not the
// progressing run.
func TestTypeScriptAgentUnderWorkflowPause(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv, c := pauseServer(t)
	began := time.Now()
	w, err := typescript.StartWith(ctx, t, typescript.Options{HostPort: srv.FrontendHostPort(), Namespace: srv.Namespace(),
		TaskQueue: "ts-agents", ModelLatency: time.Second})
	require.NoError(t, err)
	t.Logf("the TypeScript worker polls %v after Start", time.Since(began).Round(time.Millisecond))

	start := func(id, scenario string, maxTurns int) client.WorkflowRun {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: w.TaskQueue},
			workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: scenario, Width: 3, MaxTurns: maxTurns})
		require.NoError(t, err)
		return run
	}
	loop := start("ts-loop", activities.ParallelStuck, 200)
	progress := start("ts-progress", activities.ParallelProgressing, 0)

	// Parallel tool calls: a workflow task completion schedules a turn's
	// three searches at once.
	require.Eventually(t, func() bool { return maxBatch(export(ctx, t, c, "ts-loop")) >= 3 }, time.Minute, 100*time.Millisecond)

	// Pause at a quiet moment: the model is thinking (its call started,
	// ModelLatency long) and no workflow task is pending. A pause that
	// lands on a workflow task scheduled but not started is another case:
	// TestPauseBeforeWorkflowTaskStarted.
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, "ts-loop", loop.GetRunID())
		require.NoError(t, err)
		acts := d.GetPendingActivities()
		return d.GetPendingWorkflowTask() == nil && len(acts) == 1 && acts[0].GetActivityType().GetName() == "ModelTurn" &&
			acts[0].GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && time.Since(acts[0].GetLastStartedTime().AsTime()) < 200*time.Millisecond
	}, time.Minute, 20*time.Millisecond)
	pause(ctx, t, c, srv.Namespace(), "ts-loop", loop.GetRunID(), "ts-loop-pause-1")
	d, err := c.DescribeWorkflowExecution(ctx, "ts-loop", loop.GetRunID())
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED, d.GetWorkflowExecutionInfo().GetStatus())
	require.Equal(t, "typescript-test", d.GetWorkflowExtendedInfo().GetPauseInfo().GetIdentity())
	h := export(ctx, t, c, "ts-loop")
	require.Equal(t, 1, count(h, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED))
	require.Zero(t, count(h, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED), "the pause landed on a pending workflow task (a loaded machine?)%s", lastEvents(h, 8))
	before := count(h, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
	// The model's answer comes while paused; the tool calls it asks for
	// are not scheduled.
	require.Eventually(t, func() bool {
		return count(export(ctx, t, c, "ts-loop"), enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) == before
	}, time.Minute, 50*time.Millisecond, "the model's call does not complete while paused")
	time.Sleep(2 * time.Second)
	h = export(ctx, t, c, "ts-loop")
	after := count(h, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
	require.Equal(t, before, after, "an activity was scheduled while the workflow was paused%s", lastEvents(h, 8))
	t.Logf("paused at %d scheduled calls; the model's answer came, no call was scheduled", before)

	// The same request id again is no second pause.
	pause(ctx, t, c, srv.Namespace(), "ts-loop", loop.GetRunID(), "ts-loop-pause-1")
	require.Equal(t, 1, count(export(ctx, t, c, "ts-loop"), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED))

	// Unpause: the loop goes on.
	unpause(ctx, t, c, srv.Namespace(), "ts-loop", loop.GetRunID(), "ts-loop-unpause-1")
	require.Eventually(t, func() bool {
		return count(export(ctx, t, c, "ts-loop"), enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) >= after+6
	}, time.Minute, 100*time.Millisecond, "the loop does not go on after the unpause: %s\n%s", lastEvents(export(ctx, t, c, "ts-loop"), 12), w.Output())

	// The analysis reads the TypeScript history as a Go one: under the
	// parallel sample's options, the loop halts.
	var ex history.Execution
	require.Eventually(t, func() bool {
		ex = analyze(t, export(ctx, t, c, "ts-loop"))
		return len(ex.Halts()) > 0
	}, 2*time.Minute, 500*time.Millisecond, "the TypeScript loop is not halted")
	t.Logf("TypeScript loop: %d calls judged; %s", len(ex.Calls), strings.Join(verdicts(ex), "; "))

	// Terminate ends it.
	require.NoError(t, c.TerminateWorkflow(ctx, "ts-loop", loop.GetRunID(), "the test ends the loop"))
	err = loop.Get(ctx, nil)
	var term *temporal.TerminatedError
	require.ErrorAs(t, err, &term)
	ex = analyze(t, export(ctx, t, c, "ts-loop"))
	require.NotEmpty(t, ex.Halts())

	// The progressing run completes, and is not halted.
	var res workflows.ParallelResult
	require.NoError(t, progress.Get(ctx, &res), w.Output())
	require.Equal(t, workflows.OutcomeCompleted, res.Outcome)
	require.Equal(t, activities.ParallelProgressTurns+1, res.Iterations)
	require.Equal(t, 3*activities.ParallelProgressTurns, res.ToolCalls)
	ex = analyze(t, export(ctx, t, c, "ts-progress"))
	require.Empty(t, ex.Halts(), "the progressing TypeScript run is halted")
}

// TestPauseBeforeWorkflowTaskStarted: a pause that finds a workflow task
// scheduled but not started makes the server fail that task
// (WorkflowTaskFailed, cause WorkflowPauseRequestedBeforeTaskStarted, with
// no WorkflowTaskStarted before it). The Go SDK takes that history and the
// run goes on after the unpause; the TypeScript SDK (1.24.0) cannot replay
// it ("WorkflowTaskMachine in state Scheduled says the transition is
// invalid"), fails every workflow task after the unpause, and the run
// stays stuck. The pause lands on such a task whenever no worker polls, or
// in the instant between a task's scheduling and its start. If the
// TypeScript half fails, the SDK was fixed: update docs/watch.md.
func TestPauseBeforeWorkflowTaskStarted(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, c := pauseServer(t)
	pauseUnstarted := func(t *testing.T, id string) client.WorkflowRun {
		// Nobody polls the queue yet: the first workflow task waits.
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: id},
			workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 3})
		require.NoError(t, err)
		pause(ctx, t, c, srv.Namespace(), id, "", id+"-pause")
		require.Equal(t, []enumspb.EventType{
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
			enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
			enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED,
		}, eventTypes(export(ctx, t, c, id)))
		return run
	}

	t.Run("go", func(t *testing.T) {
		run := pauseUnstarted(t, "pause-unstarted-go")
		testsuite.StartWorker(t, c, "pause-unstarted-go", testsuite.WorkerOptions{Register: func(r worker.Registry) {
			r.RegisterWorkflow(workflows.ParallelToolAgent)
			r.RegisterActivity(&activities.ParallelTools{})
		}})
		unpause(ctx, t, c, srv.Namespace(), "pause-unstarted-go", "", "unpause-go")
		var res workflows.ParallelResult
		require.NoError(t, run.Get(ctx, &res))
		require.Equal(t, workflows.DefaultMaxTurns, res.Iterations)
		// The analysis reads the failed task and the pause too.
		ex := analyze(t, export(ctx, t, c, "pause-unstarted-go"))
		require.NotEmpty(t, ex.Halts())
	})

	t.Run("typescript", func(t *testing.T) {
		run := pauseUnstarted(t, "pause-unstarted-ts")
		w, err := typescript.Start(ctx, t, srv.FrontendHostPort(), srv.Namespace(), "pause-unstarted-ts")
		require.NoError(t, err)
		unpause(ctx, t, c, srv.Namespace(), "pause-unstarted-ts", "", "unpause-ts")
		const stuck = "WorkflowTaskMachine in state Scheduled says the transition is invalid"
		require.Eventually(t, func() bool { return strings.Contains(w.Output(), stuck) }, time.Minute, 100*time.Millisecond,
			"the TypeScript SDK now replays a task failed by a pause: update docs/watch.md and this test\n%s", w.Output())
		time.Sleep(2 * time.Second)
		h := export(ctx, t, c, "pause-unstarted-ts")
		require.Zero(t, count(h, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), "the run went on after all")
		d, err := c.DescribeWorkflowExecution(ctx, "pause-unstarted-ts", run.GetRunID())
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus())
		t.Logf("stuck after the unpause: workflow task attempt %d%s", d.GetPendingWorkflowTask().GetAttempt(), lastEvents(h, 6))
		require.NoError(t, c.TerminateWorkflow(ctx, "pause-unstarted-ts", run.GetRunID(), "stuck"))
	})

	// Mid-run, a reset to the last completed workflow task before the
	// failed one recovers a stuck TypeScript run: the new run's history
	// has no such task (the calls after the reset point run again).
	t.Run("typescript-midrun-reset", func(t *testing.T) {
		const id = "pause-midrun-ts"
		// No worker: the next workflow task waits, scheduled.
		run := loopWithWaitingTask(ctx, t, srv, c, id)
		pause(ctx, t, c, srv.Namespace(), id, "", id+"-pause")
		failed, resetTo := int64(0), int64(0)
		for _, e := range export(ctx, t, c, id).GetEvents() {
			switch {
			case e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED:
				failed = e.GetEventId()
			case e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && failed == 0:
				resetTo = e.GetEventId()
			}
		}
		require.NotZero(t, failed, "the pause failed no workflow task")
		w2, err := typescript.Start(ctx, t, srv.FrontendHostPort(), srv.Namespace(), id)
		require.NoError(t, err)
		unpause(ctx, t, c, srv.Namespace(), id, "", id+"-unpause")
		require.Eventually(t, func() bool { return strings.Contains(w2.Output(), "WorkflowTaskMachine in state Scheduled") },
			time.Minute, 100*time.Millisecond, "not stuck after the unpause\n%s", w2.Output())

		reset, err := c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
			Namespace: srv.Namespace(), WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: run.GetRunID()},
			Reason: "recover from a pause on an unstarted workflow task", WorkflowTaskFinishEventId: resetTo, RequestId: id + "-reset"})
		require.NoError(t, err)
		scheduledAtReset := 0
		for _, e := range export(ctx, t, c, id).GetEvents() {
			if e.GetEventId() < resetTo && e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
				scheduledAtReset++
			}
		}
		require.Eventually(t, func() bool {
			h, err := history.ExportHistory(ctx, c, id, reset.GetRunId())
			require.NoError(t, err)
			return count(h, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) >= scheduledAtReset+8
		}, time.Minute, 100*time.Millisecond, "the reset run does not go on\n%s", w2.Output())
		require.NoError(t, c.TerminateWorkflow(ctx, id, reset.GetRunId(), "done"))
		t.Logf("paused on the unstarted task at event %d, reset to event %d: the new run goes on", failed, resetTo)
	})
}

// TestTypeScriptAgentHeedsLoopWarning: a workflow of any SDK may read the
// warning a watcher signals (loop.warning): the heeding TypeScript agent
// passes it to its model, which changes approach and answers; a warning
// signalled to the stuck agent changes none of its calls.
func TestTypeScriptAgentHeedsLoopWarning(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv, c := pauseServer(t)
	w, err := typescript.StartWith(ctx, t, typescript.Options{HostPort: srv.FrontendHostPort(), Namespace: srv.Namespace(),
		TaskQueue: "ts-agents", ModelLatency: 100 * time.Millisecond})
	require.NoError(t, err)
	warning := protocol.Warning{Detector: "identical_output", Message: "WebSearch repeated with the same results",
		Directive: "Stop repeating the same searches.", N: 1, Of: 1, Node: "WebSearch"}
	for _, tt := range []struct {
		scenario string
		signal   any
		outcome  string
	}{
		{activities.ParallelHeeds, warning, workflows.OutcomeCompleted},
		{activities.ParallelHeeds, protocol.Notice{Warning: &warning}, workflows.OutcomeCompleted},
		{activities.ParallelStuck, warning, workflows.OutcomeGaveUp},
	} {
		id := fmt.Sprintf("heed-%s-%T", tt.scenario, tt.signal)
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: w.TaskQueue},
			workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: tt.scenario, Width: 3})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			return count(export(ctx, t, c, id), enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) >= 4
		}, time.Minute, 50*time.Millisecond)
		require.NoError(t, c.SignalWorkflow(ctx, id, "", "loop.warning", tt.signal))
		var res workflows.ParallelResult
		require.NoError(t, run.Get(ctx, &res), id)
		require.Equal(t, tt.outcome, res.Outcome, id)
		if tt.scenario == activities.ParallelHeeds {
			require.Equal(t, "warning 1/1: Stop repeating the same searches.", res.Heeded, id)
			require.Contains(t, res.Final, "read the release notes of 3 projects", id)
		} else {
			require.Empty(t, res.Heeded, id)
			require.Equal(t, workflows.DefaultMaxTurns, res.Iterations, id)
		}
	}
}

// TestTypeScriptAgentReadsAsGo: the TypeScript agent and the Go sample
// make the same calls with the same arguments and results, byte for byte,
// and the analysis gives both the same verdicts, call for call.
func TestTypeScriptAgentReadsAsGo(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	srv, c := pauseServer(t)
	w, err := typescript.Start(ctx, t, srv.FrontendHostPort(), srv.Namespace(), "ts-agents")
	require.NoError(t, err)
	// The Go sample without the guard: a worker the team cannot redeploy.
	testsuite.StartWorker(t, c, "go-agents", testsuite.WorkerOptions{Register: func(r worker.Registry) {
		r.RegisterWorkflow(workflows.ParallelToolAgent)
		r.RegisterActivity(&activities.ParallelTools{})
	}})

	for _, in := range []workflows.ParallelInput{
		{Scenario: activities.ParallelStuck, Width: 3},
		{Scenario: activities.ParallelStuck, Width: 4, Mixed: true, Task: "compare the changes"},
		{Scenario: activities.ParallelProgressing, Width: 3},
	} {
		name := fmt.Sprintf("%s-w%d-mixed%v", in.Scenario, in.Width, in.Mixed)
		runs := map[string]*historypb.History{}
		results := map[string]workflows.ParallelResult{}
		for _, queue := range []string{w.TaskQueue, "go-agents"} {
			id := name + "-" + queue
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.WorkflowParallelTool, in)
			require.NoError(t, err)
			var res workflows.ParallelResult
			require.NoError(t, run.Get(ctx, &res), "%s\n%s", id, w.Output())
			results[queue], runs[queue] = res, export(ctx, t, c, id)
		}
		require.Equal(t, results["go-agents"], results[w.TaskQueue], name)
		goCalls, tsCalls := calls(runs["go-agents"]), calls(runs[w.TaskQueue])
		require.NotEmpty(t, goCalls)
		require.Equal(t, strings.Join(goCalls, "\n"), strings.Join(tsCalls, "\n"), "%s: the calls differ", name)

		a, err := history.NewAnalyzer(history.Options{Guard: workflows.ParallelGuardOptions()})
		require.NoError(t, err)
		goEx, tsEx := a.History(runs["go-agents"], "go"), a.History(runs[w.TaskQueue], "ts")
		require.NoError(t, errors.Join(goEx.Err, tsEx.Err))
		require.Equal(t, goEx.Calls, tsEx.Calls, name)
		require.Equal(t, verdicts(goEx), verdicts(tsEx), "%s: the analysis reads the runs differently", name)
		if in.Scenario == activities.ParallelStuck {
			require.NotEmpty(t, tsEx.Halts(), name)
		} else {
			require.Empty(t, tsEx.Halts(), name)
		}
		t.Logf("%s: %d calls, %d verdicts alike", name, len(tsEx.Calls), len(tsEx.Verdicts))
	}
}

// analyze analyses one history under the parallel sample's options: every
// event read, the workflow guarded.
func analyze(t *testing.T, h *historypb.History) history.Execution {
	t.Helper()
	a, err := history.NewAnalyzer(history.Options{Guard: workflows.ParallelGuardOptions()})
	require.NoError(t, err)
	ex := a.History(h, "")
	require.NoError(t, ex.Err)
	require.Empty(t, ex.Problems)
	require.True(t, ex.Guarded, ex.NotGuarded)
	return ex
}

// calls are a history's activity calls in order: type, input and result
// payloads as the bytes the worker wrote.
func calls(h *historypb.History) []string {
	byID := map[int64]int{}
	var out []string
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			byID[e.GetEventId()] = len(out)
			out = append(out, fmt.Sprintf("%s %s", a.GetActivityType().GetName(), payloads(a.GetInput().GetPayloads())))
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			out[byID[a.GetScheduledEventId()]] += " -> " + payloads(a.GetResult().GetPayloads())
		}
	}
	return out
}

func payloads[P interface {
	GetMetadata() map[string][]byte
	GetData() []byte
}](ps []P) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "[%s]%s", p.GetMetadata()["encoding"], p.GetData())
	}
	return b.String()
}

func verdicts(ex history.Execution) []string {
	var out []string
	for _, v := range ex.Verdicts {
		if v.Warning != nil {
			out = append(out, fmt.Sprintf("call %d: warn %s on %s: %s", v.Call, v.Warning.Detector, v.Warning.Node, v.Warning.Message))
		} else {
			out = append(out, fmt.Sprintf("call %d: halt %s on %s: %s", v.Call, v.Halt.Detector, v.Halt.Node, v.Halt.Message))
		}
	}
	return out
}

// pause pauses a workflow with Workflow Pause (runID "" for the latest
// run), as a test's identity.
func pause(ctx context.Context, t *testing.T, c client.Client, namespace, id, runID, requestID string) {
	t.Helper()
	_, err := c.WorkflowService().PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
		Namespace: namespace, WorkflowId: id, RunId: runID,
		Identity: "typescript-test", Reason: "the test pauses it", RequestId: requestID})
	require.NoError(t, err)
}

func unpause(ctx context.Context, t *testing.T, c client.Client, namespace, id, runID, requestID string) {
	t.Helper()
	_, err := c.WorkflowService().UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
		Namespace: namespace, WorkflowId: id, RunId: runID,
		Identity: "typescript-test", Reason: "the test lets it go on", RequestId: requestID})
	require.NoError(t, err)
}

// startLoop starts a stuck TypeScript loop of up to 200 turns on queue
// and waits for n events of type typ in its history.
func startLoop(ctx context.Context, t *testing.T, c client.Client, id, queue string, typ enumspb.EventType, n int) client.WorkflowRun {
	t.Helper()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 3, MaxTurns: 200})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(export(ctx, t, c, id), typ) >= n }, time.Minute, 20*time.Millisecond)
	return run
}

// export exports a workflow's current history.
func export(ctx context.Context, t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	h, err := history.ExportHistory(ctx, c, id, "")
	require.NoError(t, err)
	return h
}

func eventTypes(h *historypb.History) []enumspb.EventType {
	var out []enumspb.EventType
	for _, e := range h.GetEvents() {
		out = append(out, e.GetEventType())
	}
	return out
}

func count(h *historypb.History, typ enumspb.EventType) int {
	n := 0
	for _, e := range h.GetEvents() {
		if e.GetEventType() == typ {
			n++
		}
	}
	return n
}

// maxBatch is the most activities one workflow task completion scheduled.
func maxBatch(h *historypb.History) int {
	most, n := 0, 0
	for _, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			n = 0
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			n++
			most = max(most, n)
		default:
			n = 0
		}
	}
	return most
}

// lastEvents describes a history's last n events, for a failure message.
func lastEvents(h *historypb.History, n int) string {
	events := h.GetEvents()
	var b strings.Builder
	for _, e := range events[max(len(events)-n, 0):] {
		fmt.Fprintf(&b, "\n%d %s", e.GetEventId(), e.GetEventType())
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
			fmt.Fprintf(&b, " %s: %s", a.GetCause(), a.GetFailure().GetMessage())
		}
	}
	return b.String()
}
