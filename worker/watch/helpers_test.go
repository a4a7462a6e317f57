package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/workflows"
)

// Task queues of the test workers: plain has no interceptor, guarded
// has the guard.
const (
	plainQueue   = "plain"
	guardedQueue = "guarded"
)

// testServer is an embedded server with Workflow Pause on or off, and a
// worker without the interceptor on plainQueue.
type testServer struct {
	srv *devserver.Server
	c   client.Client
}

func startServer(t *testing.T, pause bool) *testServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{
		Ephemeral: true, FreePorts: true, UIDisabled: true,
		DynamicConfig: map[string]any{"frontend.WorkflowPauseEnabled": pause},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := srv.NewClient(client.Options{Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		_ = srv.Stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		_ = srv.Stop()
	})
	ts := &testServer{srv: srv, c: c}
	ts.worker(t, plainQueue, nil)
	return ts
}

// worker runs the sample workflows on queue, guarded by guard if not nil,
// with extra interceptors (a test's stand-ins for slow tasks).
func (ts *testServer) worker(t *testing.T, queue string, guard *interceptor.Options, extra ...sdkinterceptor.WorkerInterceptor) {
	t.Helper()
	wo := worker.Options{Interceptors: extra}
	if d, err := time.ParseDuration(os.Getenv("LOOPGUARD_WATCH_TOOL")); err == nil && d > 0 {
		// Tools that take time (TestWatchLag): every activity waits d.
		wo.Interceptors = append(wo.Interceptors, &toolLatency{d: d})
	}
	if guard != nil {
		g, err := interceptor.New(*guard)
		if err != nil {
			t.Fatal(err)
		}
		wo.Interceptors = append(wo.Interceptors, g)
	}
	w := worker.New(ts.c, queue, wo)
	workflows.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// agent starts a ParallelToolAgent of scenario on queue.
func (ts *testServer) agent(t *testing.T, ctx context.Context, id, queue, scenario string) client.WorkflowRun {
	t.Helper()
	run, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		workflows.ParallelToolAgent, workflows.ParallelInput{Scenario: scenario, Width: 4, MaxTurns: 10000})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// watcher runs a watcher on the plain queue (and query, if set) until
// the test ends or its stop is called.
func (ts *testServer) watcher(t *testing.T, opts Options) (*Watcher, func()) {
	t.Helper()
	opts.Client = ts.c
	if opts.Query == "" {
		opts.Query = fmt.Sprintf("TaskQueue=%q", plainQueue)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.Guard.Workflows == nil {
		opts.Guard = workflows.ParallelGuardOptions()
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Run did not return within 10s of its cancellation")
			}
		})
	}
	t.Cleanup(stop)
	return w, stop
}

// history reads a run's history so far.
func (ts *testServer) history(t *testing.T, ctx context.Context, id, runID string) []*historypb.HistoryEvent {
	t.Helper()
	var out []*historypb.HistoryEvent
	it := ts.c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// count counts the events of type typ.
func count(events []*historypb.HistoryEvent, typ enumspb.EventType) int {
	n := 0
	for _, e := range events {
		if e.GetEventType() == typ {
			n++
		}
	}
	return n
}

// describe describes a run.
func (ts *testServer) describe(t *testing.T, ctx context.Context, id, runID string) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	d, err := ts.c.DescribeWorkflowExecution(ctx, id, runID)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// eventually polls cond every 100ms until it holds or ctx is done.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// analyse judges a history as the analysis does afterwards: to its end
// as it stands.
func analyse(t *testing.T, events []*historypb.HistoryEvent) snapshot {
	t.Helper()
	r, err := newReader(workflows.ParallelGuardOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.add(events...)
	return r.rest()
}

// observed is a logger whose lines a test can count.
func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	return zap.New(core), logs
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sameHalts reports whether the watcher's halts are the analysis's: the
// same calls, detectors and nodes.
func sameHalts(watched []HaltStatus, after []halt) bool {
	if len(watched) != len(after) {
		return false
	}
	for i, h := range after {
		ev := h.Verdict.Halt
		if watched[i].Call != h.Verdict.Call || watched[i].Detector != string(ev.Detector) || watched[i].Node != ev.Node {
			return false
		}
	}
	return true
}

// toolLatency makes every activity take d, as a tool that calls out
// does.
type toolLatency struct {
	sdkinterceptor.WorkerInterceptorBase
	d time.Duration
}

func (l *toolLatency) InterceptActivity(ctx context.Context, next sdkinterceptor.ActivityInboundInterceptor) sdkinterceptor.ActivityInboundInterceptor {
	return &slowActivity{ActivityInboundInterceptorBase: sdkinterceptor.ActivityInboundInterceptorBase{Next: next}, d: l.d}
}

type slowActivity struct {
	sdkinterceptor.ActivityInboundInterceptorBase
	d time.Duration
}

func (a *slowActivity) ExecuteActivity(ctx context.Context, in *sdkinterceptor.ExecuteActivityInput) (any, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(a.d):
	}
	return a.Next.ExecuteActivity(ctx, in)
}
