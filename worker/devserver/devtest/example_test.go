package devtest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/workflows"
)

// An integration test against the embedded server (not run here: it needs
// a *testing.T).
func ExampleStartServer() {
	integration := func(t *testing.T) {
		srv := devtest.StartServer(t, devserver.Options{UIDisabled: true})
		c := devtest.NewClient(t, srv)
		guard := workflows.GuardOptions()
		testsuite.StartWorker(t, c, workflows.TaskQueue, testsuite.WorkerOptions{Guard: &guard, Register: workflows.Register})

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		in := workflows.LoopInput{Scenario: "identical-patch"}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "loop-1", TaskQueue: workflows.TaskQueue}, workflows.CoderVerifierLoop, in)
		if err != nil {
			t.Fatal(err)
		}
		s, err := testsuite.WaitStatus(ctx, c, "loop-1", testsuite.Halted(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Log("halted:", s.Halt.HaltReason, s.Halt.Message)
		if err := c.SignalWorkflow(ctx, "loop-1", "", "escalate", protocol.EscalateRequest{Reason: "stuck", By: "test"}); err != nil {
			t.Fatal(err)
		}
		var res workflows.LoopResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		// Keep the history for replay tests in CI.
		if err := testsuite.ExportHistoryFile(ctx, c, "loop-1", "", filepath.Join("testdata", "loop-1.json")); err != nil {
			t.Fatal(err)
		}
	}
	_ = integration
}
