package watch

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
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
	w := worker.New(ts.c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(chainLoop, workflow.RegisterOptions{Name: "ChainLoop"})
	w.RegisterActivityWithOptions(chainSearch, activity.RegisterOptions{Name: "Search"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	// The watcher starts after the chain has run a few runs: it reads
	// the runs before the one it finds, as after a restart.
	if _, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "chain", TaskQueue: queue}, "ChainLoop", 0); err != nil {
		t.Fatal(err)
	}
	watcher, _ := ts.watcher(t, Options{Query: `WorkflowType="ChainLoop"`, Guard: interceptor.Options{Workflows: []string{"ChainLoop"}}})
	eventually(t, ctx, "a run of the chain paused", func() bool {
		return ts.describe(t, ctx, "chain", "").GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
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
	}
	_ = ts.c.TerminateWorkflow(context.Background(), "chain", "", "test over")
}
