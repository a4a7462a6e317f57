package watch

import (
	"log/slog"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/internal/scripted"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchThroughACodec: histories written through a payload codec are
// judged with the workers' data converter (Options.DataConverter, the
// command's --codec-endpoint); without it the watcher cannot read the
// results, halts nothing, and says so (a log line, Status's problems)
// instead of staying silent.
func TestWatchThroughACodec(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	dc := scripted.EncryptingDataConverter()
	coded, err := ts.srv.NewClient(client.Options{DataConverter: dc, Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coded.Close)
	const queue = "coded"
	w := worker.New(coded, queue, worker.Options{})
	workflows.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	run, err := coded.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "coded", TaskQueue: queue},
		workflows.ParallelToolAgent, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 4, MaxTurns: 10000})
	if err != nil {
		t.Fatal(err)
	}

	// Without the codec: the problem is said, nothing is paused.
	log, logs := observed()
	blind, stop := ts.watcher(t, Options{Query: `TaskQueue="coded"`, Logger: log})
	eventually(t, ctx, "the watcher to say it cannot read the results", func() bool {
		return logs.FilterMessageSnippet("cannot be judged").Len() > 0
	})
	listed := false
	for _, e := range blind.Status().Executions {
		listed = listed || e.WorkflowID == "coded" && e.Problems > 0
	}
	if !listed {
		t.Errorf("status lists no problems: %+v", blind.Status())
	}
	if n := logs.FilterMessageSnippet("cannot be judged").Len(); n > maxLoggedProblems {
		t.Errorf("%d problem lines, want at most %d", n, maxLoggedProblems)
	}
	stop()

	// With it: paused.
	ts.watcher(t, Options{Query: `TaskQueue="coded"`, DataConverter: dc})
	eventually(t, ctx, "the coded agent paused", func() bool {
		return ts.describe(t, ctx, "coded", "").GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
	})
	if n := count(ts.history(t, ctx, "coded", run.GetRunID()), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 1 {
		t.Errorf("%d Paused events, want 1", n)
	}
}
