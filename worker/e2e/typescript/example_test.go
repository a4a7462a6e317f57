package typescript_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/worker/e2e/typescript"
	"github.com/loopguard/loopguard/workflows"
)

// A test that runs the TypeScript agent's stuck loop on the embedded
// server with Workflow Pause on (not run here: it needs a *testing.T).
func ExampleStart() {
	integration := func(t *testing.T) {
		srv := devtest.StartServer(t, devserver.Options{UIDisabled: true,
			DynamicConfig: map[string]any{"frontend.WorkflowPauseEnabled": true}})
		c := devtest.NewClient(t, srv)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// Skips the test where Node.js is missing.
		w, err := typescript.Start(ctx, t, srv.FrontendHostPort(), srv.Namespace(), "ts-agents")
		if err != nil {
			t.Fatal(err)
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "ts-1", TaskQueue: w.TaskQueue},
			workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 3, MaxTurns: 200})
		if err != nil {
			t.Fatal(err)
		}
		t.Log("started", run.GetRunID())
	}
	_ = integration
}
