package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap/zapcore"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/workflows"
)

// TestServers holds the tests that run Temporal servers, in parallel. The
// environment is cleared of TEMPORAL_* first: run reads it.
func TestServers(t *testing.T) {
	isolateEnv(t)
	t.Run("EndToEnd", func(t *testing.T) {
		t.Parallel()
		testEndToEnd(t)
	})
	t.Run("RunDemoExit", func(t *testing.T) {
		t.Parallel()
		testRunDemoExit(t)
	})
	t.Run("ExternalServer", func(t *testing.T) {
		t.Parallel()
		testExternalServer(t)
	})
	t.Run("RunDemoOnHaltFail", func(t *testing.T) {
		t.Parallel()
		testRunDemoOnHaltFail(t)
	})
}

// testRunDemoOnHaltFail runs the demo with a policy file that escalates
// every halt at once, and without the Web UI: every halted scenario ends
// "escalated" for the reason it wants.
func testRunDemoOnHaltFail(t *testing.T) {
	ctx := testContext(t, 80*time.Second)
	policy := filepath.Join(t.TempDir(), "fail.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"onHalt": "fail"}`), 0o644))
	var stdout, stderr syncBuffer
	err := run(ctx, []string{"--demo", "--demo-exit", "--ephemeral", "--port", "0", "--no-ui", "--policy", policy}, &stdout, &stderr)
	out := stdout.String()
	t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr.String())
	require.NoError(t, err)
	assert.Contains(t, out, "waiting: 13/13 settled (0 halted)")
	assert.Contains(t, out, "  policy           "+policy+"\n")
	assert.NotContains(t, out, "Web UI")
	assert.Contains(t, out, "  HTTP API         http://")
	assert.NotContains(t, out, "temporal workflow signal", "nothing is left to resume")
	lines := strings.Split(out, "\n")
	for _, sc := range workflows.Scenarios() {
		i := indexWithPrefix(lines, sc.Name+" ")
		if !assert.GreaterOrEqual(t, i, 0, sc.Name) {
			continue
		}
		want := "  completed"
		// Only a warning can steer a loop when every halt fails.
		if sc.Want == workflows.WantHalted || sc.Steer == workflows.SteerReviewer || sc.Steer == workflows.SteerHuman {
			want = "  escalated: " + string(sc.WantReason) + "  "
		}
		assert.Contains(t, lines[i], want, sc.Name)
		assert.True(t, strings.HasSuffix(lines[i], "  ok"), lines[i])
	}
}

// testRunDemoExit runs the worker as a user would for CI:
// --demo --demo-exit --ephemeral on free ports.
func testRunDemoExit(t *testing.T) {
	ctx := testContext(t, 80*time.Second)
	var stdout, stderr syncBuffer
	began := time.Now()
	err := run(ctx, []string{"--demo", "--demo-exit", "--ephemeral", "--port", "0", "--ui-port", "0", "--demo-timeout", "60s"}, &stdout, &stderr)
	out := stdout.String()
	t.Logf("run returned after %v; stdout:\n%s\nstderr:\n%s", time.Since(began).Round(time.Millisecond), out, stderr.String())
	require.NoError(t, err)

	assert.Contains(t, out, "Web UI           http://127.0.0.1:")
	assert.Contains(t, out, "(embedded; data: in memory (--ephemeral))")
	// The banner says how a team's own workers reach the embedded server,
	// and where its HTTP API is.
	assert.Regexp(t, `your workers     client\.Options\{HostPort: "127\.0\.0\.1:\d+"\}, or TEMPORAL_ADDRESS=127\.0\.0\.1:\d+\n`, out)
	assert.Regexp(t, `HTTP API         http://127\.0\.0\.1:\d+/api/v1/namespaces/default/workflows\n`, out)
	assert.Contains(t, out, "waiting: 13/13 settled (7 halted)")
	assert.Contains(t, out, "All 13 scenarios ended as expected.")
	assert.NotContains(t, out, "\r", "stdout is not a terminal: plain progress lines")
	assert.Equal(t, 1, strings.Count(out, "tctl      tctl --address"), "the tctl commands are shown once, under the first halted row")

	lines := strings.Split(out, "\n")
	for _, sc := range workflows.Scenarios() {
		i := indexWithPrefix(lines, sc.Name+" ")
		if !assert.GreaterOrEqual(t, i, 0, "a row for %s", sc.Name) {
			continue
		}
		row := lines[i]
		assert.Contains(t, row, "demo-"+sc.Name+"-", sc.Name)
		assert.True(t, strings.HasSuffix(row, "  ok"), "%s: %q", sc.Name, row)
		details := strings.Join(lines[i+1:min(i+9, len(lines))], "\n")
		switch sc.Steer {
		case workflows.SteerWarning:
			assert.Contains(t, row, "  completed: warned, heeded  ", sc.Name)
			continue
		case workflows.SteerReviewer:
			assert.Contains(t, row, "  completed: halt handler resumed  ", sc.Name)
			assert.Contains(t, details, "reviewer  the halt handler resumed the halt: ", sc.Name)
			continue
		case workflows.SteerHuman:
			assert.Contains(t, row, "  completed: resumed with guidance  ", sc.Name)
			assert.Contains(t, details, "temporal workflow update execute --address 127.0.0.1:", sc.Name)
			assert.Contains(t, details, `"guidance":"`, sc.Name)
			continue
		}
		if sc.Want == workflows.WantCompleted {
			assert.Contains(t, row, "  completed  ", sc.Name)
			continue
		}
		assert.Contains(t, row, "  halted: "+string(sc.WantReason)+"  ", sc.Name)
		// The halted workflow's details follow its row.
		assert.Contains(t, details, "resume    temporal workflow signal --address 127.0.0.1:", sc.Name)
		if sc.WantReason != protocol.ReasonBudgetExceeded {
			assert.Contains(t, details, "ignored   warning 1/1 at ", sc.Name)
		}
		assert.Contains(t, details, "--name resume", sc.Name)
		assert.Contains(t, details, "escalate  temporal workflow signal", sc.Name)
		assert.Contains(t, details, "/namespaces/default/workflows/demo-"+sc.Name+"-", sc.Name)
	}
}

func indexWithPrefix(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

// testExternalServer points the worker at a server it did not start, as
// with TEMPORAL_ADDRESS: the namespace and search attribute are checked,
// LoopGuardState is used because the namespace has it, and the worker
// stops cleanly when its context ends.
func testExternalServer(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	srv, err := devserver.Start(ctx, devserver.Options{
		Ephemeral:        true,
		FreePorts:        true,
		UIDisabled:       true,
		SearchAttributes: map[string]enumspb.IndexedValueType{defaultSearchAttribute: enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		Logger:           testLogger(t, zapcore.WarnLevel),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	addr := srv.FrontendHostPort()

	var stdout, stderr syncBuffer
	err = run(ctx, []string{"--address", addr, "--namespace", "nope"}, &stdout, &stderr)
	require.EqualError(t, err, `temporal at `+addr+` has no namespace "nope" (create it, or choose another with --namespace or TEMPORAL_NAMESPACE)`)

	err = run(ctx, []string{"--address", addr, "--search-attribute", "Missing"}, &stdout, &stderr)
	var ue *usageError
	require.ErrorAs(t, err, &ue)
	require.ErrorContains(t, err, `search attribute "Missing" is not registered on namespace "default"`)

	// A worker with its own task queue and supervisor.
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	var wout, werr syncBuffer
	go func() {
		done <- run(rctx, []string{"--address", addr, "--task-queue", "external", "--supervisor-id", "external-supervisor"}, &wout, &werr)
	}()
	require.Eventually(t, func() bool { return strings.Contains(wout.String(), "Worker running.") }, 20*time.Second, 20*time.Millisecond,
		"stdout: %s\nstderr: %s", wout.String(), werr.String())
	banner := wout.String()
	assert.Contains(t, banner, "Temporal server  "+addr+"\n")
	assert.Contains(t, banner, "search attribute LoopGuardState")
	assert.Contains(t, banner, "supervisor       external-supervisor")
	assert.NotContains(t, banner, "Web UI")

	c, err := srv.NewClient(client.Options{Logger: newSDKLogger(testLogger(t, zapcore.WarnLevel))})
	require.NoError(t, err)
	defer c.Close()
	var sc workflows.Scenario
	for _, s := range workflows.Scenarios() {
		if s.Name == activities.ScenarioIdenticalPatch {
			sc = s
		}
	}
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "external-identical-patch", TaskQueue: "external"}, sc.Workflow, sc.Input)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: defaultSearchAttribute + ` = "halted:stalled"`,
		})
		return err == nil && len(resp.GetExecutions()) == 1 &&
			resp.GetExecutions()[0].GetExecution().GetWorkflowId() == "external-identical-patch"
	}, 20*time.Second, 100*time.Millisecond, "the guard sets the search attribute on the external server")
	require.Eventually(t, func() bool {
		v, err := c.QueryWorkflow(ctx, "external-supervisor", "", workflows.HaltedQuery)
		var halts []protocol.HaltEvent
		return err == nil && v.Get(&halts) == nil && len(halts) == 1 && halts[0].WorkflowID == "external-identical-patch"
	}, 10*time.Second, 100*time.Millisecond, "the worker started its supervisor")

	stop()
	select {
	case err := <-done:
		require.NoError(t, err, "a cancelled worker stops cleanly")
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
	assert.False(t, errors.Is(ctx.Err(), context.DeadlineExceeded))
}
