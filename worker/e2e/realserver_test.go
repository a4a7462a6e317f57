package e2e_test

import (
	"log/slog"

	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/log"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
)

// The production-safety tests run against the embedded Temporal server of
// package devserver. Most share one in-memory server (each test on its own
// task queue); the server-restart test starts its own, file-backed.

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		_ = shared.srv.Stop()
	}
	os.Exit(code)
}

var shared struct {
	once sync.Once
	srv  *devserver.Server
	err  error
}

// sharedServer returns the package's shared in-memory server, started on
// first use and stopped by TestMain.
func sharedServer(t testing.TB) *devserver.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		shared.srv, shared.err = devserver.Start(ctx, devserver.Options{
			Ephemeral: true, FreePorts: true, UIDisabled: true, StartTimeout: 60 * time.Second,
		})
	})
	require.NoError(t, shared.err, "start the shared embedded server")
	return shared.srv
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// queueFor is a task queue (and workflow id prefix) unique to the test.
func queueFor(t testing.TB) string { return unsafeChars.ReplaceAllString(t.Name(), "-") }

func guardPtr(o interceptor.Options) *interceptor.Options { return &o }

// fixtureWorker starts a worker for the fixture workflows; guard nil means
// no guard.
func fixtureWorker(t testing.TB, c client.Client, queue string, guard *interceptor.Options) func() {
	t.Helper()
	w := testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{Guard: guard, Register: fixtures.Register})
	return w.Stop
}

func start(t testing.TB, ctx context.Context, c client.Client, queue, id string, wf any, args ...any) client.WorkflowRun {
	t.Helper()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute,
	}, wf, args...)
	require.NoError(t, err)
	return run
}

func result(t testing.TB, ctx context.Context, run client.WorkflowRun) fixtures.Result {
	t.Helper()
	var r fixtures.Result
	require.NoError(t, run.Get(ctx, &r))
	return r
}

func exportHistory(t testing.TB, ctx context.Context, c client.Client, id, runID string) *historypb.History {
	t.Helper()
	h, err := testsuite.ExportHistory(ctx, c, id, runID)
	require.NoError(t, err)
	return h
}

// requireHealthyHistory checks that no workflow task of the run failed
// (no non-determinism, no panics, no rejected commands) and that it
// replays with the guard, with its own and with drifted options.
func requireHealthyHistory(t testing.TB, ctx context.Context, c client.Client, id, runID string) *historypb.History {
	t.Helper()
	h := exportHistory(t, ctx, c, id, runID)
	info := testsuite.Inspect(h)
	require.Zero(t, info.WorkflowTaskFailures, "workflow %s: workflow task failures in its history", id)
	for _, g := range []interceptor.Options{{}, fixtures.DriftedOptions()} {
		require.NoError(t, testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: g, Register: fixtures.RegisterWorkflows}))
	}
	return h
}

// countEvents counts the events of a type in a workflow's history so far.
func countEvents(t testing.TB, ctx context.Context, c client.Client, id string, typ enumspb.EventType) int {
	t.Helper()
	n := 0
	for _, e := range exportHistory(t, ctx, c, id, "").GetEvents() {
		if e.GetEventType() == typ {
			n++
		}
	}
	return n
}

// waitEvents waits until the workflow's history holds at least n events of
// a type.
func waitEvents(t testing.TB, ctx context.Context, c client.Client, id string, typ enumspb.EventType, n int) {
	t.Helper()
	for countEvents(t, ctx, c, id, typ) < n {
		select {
		case <-ctx.Done():
			t.Fatalf("workflow %s: fewer than %d %s events: %v", id, n, typ, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func waitStatus(t testing.TB, ctx context.Context, c client.Client, id string, cond func(protocol.Status) bool) protocol.Status {
	t.Helper()
	s, err := testsuite.WaitStatus(ctx, c, id, cond)
	require.NoError(t, err)
	return s
}

func testClientOptions() client.Options { return client.Options{Logger: quiet()} }

// quiet drops the logs of the clients and workers the tests start.
func quiet() log.Logger { return log.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

// testLog sends a logger's lines to the test's log (shown with -v or when the
// test fails), for loggers that report what a test provokes on purpose, such
// as the "Workflow panic" stack of a replay expected to fail.
func testLog(t testing.TB) log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(tLogWriter{t}, nil)))
}

type tLogWriter struct{ t testing.TB }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
