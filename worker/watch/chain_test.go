package watch

import (
	"context"
	"errors"
	"go.uber.org/zap"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// chainRunCalls is how many calls a run of chainLoop makes before it
// continues as new: fewer than the identical-output halt needs (the
// fourth identical answer), so that no run trips on its own.
const chainRunCalls = 3

// chainLoop asks the same question chainRunCalls times a run, gets the
// same answer, and continues as new: a loop that only a judgement carried
// across continue-as-new sees.
func chainLoop(ctx workflow.Context, run int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	for range chainRunCalls {
		if err := workflow.ExecuteActivity(ctx, "Search", "the same question").Get(ctx, nil); err != nil {
			return err
		}
	}
	if run >= 40 {
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, "ChainLoop", run+1)
}

func chainSearch(context.Context, string) (string, error) { return "the same answer", nil }

// TestWatchFollowsContinueAsNew: a loop that continues as new before any
// one run trips is halted all the same, where the interceptor would halt
// it (its state is carried across continue-as-new; the watcher reads the
// runs before the one it follows).
func TestWatchFollowsContinueAsNew(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	const queue = "chain"
	ts.chainWorker(t, queue)
	// The watcher starts after the chain has run a few runs: it reads
	// the runs before the one it finds, as after a restart.
	if _, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "chain", TaskQueue: queue}, "ChainLoop", 0); err != nil {
		t.Fatal(err)
	}
	lg, _ := zap.NewDevelopment()
	watcher, _ := ts.watcher(t, Options{Logger: lg, Query: `WorkflowType="ChainLoop"`, Guard: interceptor.Options{Workflows: []string{"ChainLoop"}}})
	defer func() {
		if !t.Failed() {
			return
		}
		l, _ := ts.c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: `WorkflowId="chain"`})
		ex := l.GetExecutions()
		for i := len(ex) - 1; i >= max(len(ex)-3, 0); i-- {
			for _, e := range ts.history(t, context.Background(), "chain", ex[i].GetExecution().GetRunId()) {
				t.Logf("run %d: %d %s %s", len(ex)-1-i, e.GetEventId(), e.GetEventTime().AsTime().Format("05.000"), e.GetEventType())
			}
		}
	}()
	// A pause ahead at a run's last task, whose next call is the next
	// run's, is undone: wait for the pause of a halt.
	eventually(t, ctx, "a run of the chain paused for its halt", func() bool {
		d := ts.describe(t, ctx, "chain", "")
		if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED {
			return false
		}
		for _, e := range watcher.Status().Executions {
			if e.RunID == d.GetWorkflowExecutionInfo().GetExecution().GetRunId() && len(e.Halts) > 0 {
				return true
			}
		}
		return false
	})
	d := ts.describe(t, ctx, "chain", "")
	runID := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	events := ts.history(t, ctx, "chain", runID)
	if n := count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 1 {
		t.Errorf("%d Paused events in the paused run, want 1", n)
	}
	var halted bool
	for _, e := range watcher.Status().Executions {
		if e.RunID == runID && len(e.Halts) > 0 {
			halted = true
			t.Logf("halt at call %d of the chain (%s on %s)", e.Halts[0].Call, e.Halts[0].Detector, e.Halts[0].Node)
		}
	}
	if !halted {
		t.Errorf("status lists no halt for the paused run: %+v", watcher.Status())
		for _, e := range events {
			t.Logf("%d %s %v", e.GetEventId(), e.GetEventType(), e.GetAttributes())
		}
	}
	_ = ts.c.TerminateWorkflow(context.Background(), "chain", "", "test over")
}

// chainStepInput drives chainStep: Wait makes a run wait for the signal
// "go" before its calls; Then is what the run does after them: "can"
// continues as new (the next run waits), "fail" fails the first attempt,
// "" ends the run, or, in a later run of a retry or cron schedule, waits
// for "go" again so that the watcher finds it running.
type chainStepInput struct {
	Wait bool
	Then string
}

func chainStep(ctx workflow.Context, in chainStepInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	if in.Wait {
		workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	}
	for range chainRunCalls {
		if err := workflow.ExecuteActivity(ctx, "Search", "the same question").Get(ctx, nil); err != nil {
			return err
		}
	}
	info := workflow.GetInfo(ctx)
	switch {
	case in.Then == "can":
		return workflow.NewContinueAsNewError(ctx, "ChainStep", chainStepInput{Wait: true})
	case in.Then == "fail" && info.Attempt == 1:
		return errors.New("first attempt fails")
	case info.ContinuedExecutionRunID != "":
		workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	}
	return nil
}

// chainWorker runs ChainLoop and ChainStep on queue.
func (ts *testServer) chainWorker(t *testing.T, queue string) {
	t.Helper()
	w := worker.New(ts.c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(chainLoop, workflow.RegisterOptions{Name: "ChainLoop"})
	w.RegisterWorkflowWithOptions(chainStep, workflow.RegisterOptions{Name: "ChainStep"})
	w.RegisterActivityWithOptions(chainSearch, activity.RegisterOptions{Name: "Search"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

const judgedAlone = "watch: the runs this one continued from cannot be read; judging it alone"

// A reset earlier in a continue-as-new chain keeps the chain: run 0
// (3 identical answers) continues as new to run 1, which waits; run 0 is
// reset (run 1 terminated, run 0' continues to run 2). Run 2's 3 answers
// are the chain's 4th to 6th: the watcher pauses it, with no "judging
// it alone". Without the walk back from run 2 the chain stopped at the
// terminated run 1 and run 2, judged alone, was never paused.
func TestWatchChainThroughReset(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	const queue = "chain-reset"
	ts.chainWorker(t, queue)
	run0, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "chain-reset", TaskQueue: queue}, "ChainStep", chainStepInput{Then: "can"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "run 1", func() bool {
		return ts.describe(t, ctx, "chain-reset", "").GetWorkflowExecutionInfo().GetExecution().GetRunId() != run0.GetRunID()
	})
	var resetTo int64
	for _, e := range ts.history(t, ctx, "chain-reset", run0.GetRunID()) {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			resetTo = e.GetEventId()
		}
	}
	reset, err := ts.c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace: "default", WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "chain-reset", RunId: run0.GetRunID()},
		Reason: "test", WorkflowTaskFinishEventId: resetTo, RequestId: "chain-reset-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	var run2 string
	eventually(t, ctx, "run 2", func() bool {
		run2 = ts.describe(t, ctx, "chain-reset", "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
		return run2 != reset.GetRunId() && run2 != run0.GetRunID()
	})
	logger, logs := observed()
	ts.watcher(t, Options{Query: `WorkflowType="ChainStep"`, Logger: logger, Guard: interceptor.Options{Workflows: []string{"ChainStep"}}})
	if err := ts.c.SignalWorkflow(ctx, "chain-reset", run2, "go", nil); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			for _, l := range logs.All() {
				t.Logf("%s %s %v", l.Time.Format("05.000"), l.Message, l.ContextMap())
			}
			for _, e := range ts.history(t, context.Background(), "chain-reset", run2) {
				t.Logf("run 2: %d %s %s", e.GetEventId(), e.GetEventTime().AsTime().Format("05.000"), e.GetEventType())
			}
		}
	}()
	// Run 2, or the run a mend reset it to when the pause failed a task
	// waiting to start (pausepoint.go), is paused.
	eventually(t, ctx, "run 2 paused", func() bool {
		return ts.describe(t, ctx, "chain-reset", "").GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
	})
	if n := logs.FilterMessage(judgedAlone).Len(); n != 0 {
		t.Errorf("%d %q lines", n, judgedAlone)
	}
	_ = ts.c.TerminateWorkflow(context.Background(), "chain-reset", "", "test over")
}

// Retry and cron runs start a chain of their own, as the interceptor's
// state does (judged alone): their 3 answers after the 3 of the run
// before do not halt, and no "judging it alone" is logged for them.
func TestWatchRetryAndCronRunsJudgedAlone(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	const queue = "chain-alone"
	ts.chainWorker(t, queue)
	for _, tt := range []struct {
		give string
		opts client.StartWorkflowOptions
		in   chainStepInput
	}{
		{give: "retry", opts: client.StartWorkflowOptions{RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 2}},
			in: chainStepInput{Then: "fail"}},
		{give: "cron", opts: client.StartWorkflowOptions{CronSchedule: "@every 1s"}},
	} {
		t.Run(tt.give, func(t *testing.T) {
			tt.opts.ID, tt.opts.TaskQueue = "alone-"+tt.give, queue
			first, err := ts.c.ExecuteWorkflow(ctx, tt.opts, "ChainStep", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var second string
			eventually(t, ctx, "the second run's calls", func() bool {
				second = ts.describe(t, ctx, tt.opts.ID, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
				return second != first.GetRunID() &&
					count(ts.history(t, ctx, tt.opts.ID, second), enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) == chainRunCalls
			})
			logger, logs := observed()
			w, stop := ts.watcher(t, Options{Query: `WorkflowId="` + tt.opts.ID + `"`, Logger: logger,
				Guard: interceptor.Options{Workflows: []string{"ChainStep"}}})
			eventually(t, ctx, "followed", func() bool { return w.Status().Followed == 1 })
			time.Sleep(time.Second) // its history read
			stop()
			if n := logs.FilterMessage(judgedAlone).Len(); n != 0 {
				t.Errorf("%d %q lines", n, judgedAlone)
			}
			if st := w.Status(); st.Halts != 0 || st.Pauses != 0 {
				t.Errorf("the %s run judged with the run before: %d halts, %d pauses", tt.give, st.Halts, st.Pauses)
			}
			_ = ts.c.TerminateWorkflow(context.Background(), tt.opts.ID, "", "test over")
		})
	}
}

// TestWatchPausesAfterAnEarlierRunWasPaused: an operator paused the
// chain's first run late in its history (while it waited) and unpaused
// it; its loop goes on in the run it continued as new into. The halt of
// that run, at an event id below the earlier run's pause, is paused:
// event ids start again in each run, and the earlier run's pause is not
// one this run's halts wait to see judged.
func TestWatchPausesAfterAnEarlierRunWasPaused(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	const queue, id = "chain-paused", "chain-paused"
	ts.chainWorker(t, queue)
	run0, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, "ChainStep", chainStepInput{Wait: true, Then: "can"})
	if err != nil {
		t.Fatal(err)
	}
	// Signals it does not read move its history on (4 events each).
	for i := range 10 {
		if err := ts.c.SignalWorkflow(ctx, id, run0.GetRunID(), "noise", i); err != nil {
			t.Fatal(err)
		}
	}
	svc := ts.c.WorkflowService()
	eventually(t, ctx, "the operator's pause", func() bool {
		_, err := svc.PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{Namespace: "default", WorkflowId: id, RunId: run0.GetRunID(),
			Identity: "ops", Reason: "maintenance", RequestId: "ops-pause"})
		return err == nil
	})
	if _, err := svc.UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{Namespace: "default", WorkflowId: id, RunId: run0.GetRunID(),
		Identity: "ops", Reason: "done", RequestId: "ops-unpause"}); err != nil {
		t.Fatal(err)
	}
	var pausedAt int64
	for _, e := range ts.history(t, ctx, id, run0.GetRunID()) {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED {
			pausedAt = e.GetEventId()
		}
	}
	if err := ts.c.SignalWorkflow(ctx, id, run0.GetRunID(), "go", nil); err != nil {
		t.Fatal(err)
	}
	var run1 string
	eventually(t, ctx, "run 1", func() bool {
		run1 = ts.describe(t, ctx, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
		return run1 != run0.GetRunID()
	})
	w, _ := ts.watcher(t, Options{Query: `WorkflowId="` + id + `"`, Guard: interceptor.Options{Workflows: []string{"ChainStep"}}})
	if err := ts.c.SignalWorkflow(ctx, id, run1, "go", nil); err != nil {
		t.Fatal(err)
	}
	// The pause lands on run 1, or, where it failed a workflow task
	// waiting to start (the race a loaded machine loses), on the run the
	// watcher's mend reset run 1 to: the current run of the id.
	var paused string
	for ts.describe(t, ctx, id, "").GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for run 1 paused for its halt; status %+v", w.Status())
		case <-time.After(100 * time.Millisecond):
		}
	}
	paused = ts.describe(t, ctx, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
	if paused != run1 {
		t.Logf("run 1 was mended: reset to run %s", paused)
	}
	var hs []HaltStatus
	eventually(t, ctx, "run 1's halt listed as answered", func() bool {
		for _, e := range w.Status().Executions {
			if e.RunID == paused {
				hs = e.Halts
			}
		}
		return len(hs) > 0 && hs[0].Answered
	})
	if hs[0].Call != 4 || hs[0].Action != "pause" {
		t.Errorf("run 1's halts %+v: want the chain's 4th call halted, paused by the watcher", hs)
	}
	t.Logf("run 0 unpaused at event %d; run 1 paused for its halt", pausedAt)
	_ = ts.c.TerminateWorkflow(context.Background(), id, "", "test over")
}
