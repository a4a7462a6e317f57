package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"golang.org/x/sync/errgroup"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

const (
	loadWorkflows = 200
	loadCalls     = 20
	loadStallEach = 4 // every 4th workflow stalls once
)

// loadRun is the outcome of one load run.
type loadRun struct {
	elapsed  time.Duration
	results  map[string]fixtures.Result
	runIDs   map[string]string
	resumed  int64
	stallers map[string]bool
}

func (r loadRun) callsPerSecond() float64 {
	return float64(loadWorkflows*loadCalls) / r.elapsed.Seconds()
}

// runLoad starts loadWorkflows ScriptedLoops of loadCalls calls on queue,
// every loadStallEach-th scripted to stall once, and waits for all of them.
// With resume set, a client watches the guard's memo (as an operator
// listing halted workflows would) and resumes every halted workflow, in
// parallel. Each start, completion and resume counts into p.
func runLoad(t testing.TB, ctx context.Context, c client.Client, queue string, resume bool, p *progress) loadRun {
	t.Helper()
	r := loadRun{results: map[string]fixtures.Result{}, runIDs: map[string]string{}, stallers: map[string]bool{}}
	var mu sync.Mutex
	ids := make([]string, loadWorkflows)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%03d", queue, i)
		r.stallers[ids[i]] = i%loadStallEach == 0
	}

	begin := time.Now()
	var g errgroup.Group
	g.SetLimit(32)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, id := range ids {
		turns := fixtures.RoundRobin(loadCalls, r.stallers[id])
		g.Go(func() error {
			run, err := startLoaded(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, turns)
			if err != nil {
				return fmt.Errorf("start %d: %w (%v)", i, err, context.Cause(ctx))
			}
			p.add()
			mu.Lock()
			r.runIDs[id] = run.GetRunID()
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer p.add()
				var res fixtures.Result
				if err := run.Get(ctx, &res); err != nil {
					t.Errorf("%s: %v (%v)", id, err, context.Cause(ctx))
					return
				}
				mu.Lock()
				r.results[id] = res
				mu.Unlock()
			}()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		// The runs already started report into t: let them end first.
		wg.Wait()
		require.NoError(t, err)
	}

	if resume {
		go func() {
			wg.Wait()
			close(done)
		}()
		r.resumed = resumeHalted(t, ctx, c, queue, done, p)
	} else {
		wg.Wait()
	}
	r.elapsed = time.Since(begin)
	return r
}

// resumeHalted lists the queue's running workflows every 100ms and resumes,
// in parallel, each one whose guard memo says "halted", until done.
func resumeHalted(t testing.TB, ctx context.Context, c client.Client, queue string, done <-chan struct{}, p *progress) int64 {
	t.Helper()
	var resumed atomic.Int64
	sent := map[string]bool{}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-done:
			return resumed.Load()
		case <-ctx.Done():
			t.Errorf("load: %v", context.Cause(ctx))
			return resumed.Load()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:    fmt.Sprintf("TaskQueue = '%s' AND ExecutionStatus = 'Running'", queue),
			PageSize: loadWorkflows,
		})
		if err != nil {
			continue
		}
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			m := e.GetMemo().GetFields()["loopguard"]
			if m == nil || sent[id] {
				continue
			}
			var memo struct {
				State string `json:"state"`
			}
			if json.Unmarshal(m.GetData(), &memo) != nil || memo.State != string(protocol.StateHalted) {
				continue
			}
			sent[id] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.SignalWorkflow(ctx, id, "", protocol.DefaultResumeSignal, map[string]string{"by": "load test"}); err != nil {
					t.Errorf("resume %s: %v", id, err)
					return
				}
				resumed.Add(1)
				p.add()
			}()
		}
	}
}

// loadStill is how long TestLoad's workload may stand still (no guarded
// call finished, no workflow closed or resumed, no history checked) before
// the test counts it as stuck. The bound is on standing still, not on the
// whole run, so a loaded machine is slow, not failed; the run as a whole is
// bounded only by go test's -timeout.
const loadStill = 90 * time.Second

// progress counts what a load run has done and cancels its context when the
// count stands still for longer than still.
type progress struct{ n atomic.Int64 }

func (p *progress) add() { p.n.Add(1) }

func (p *progress) watch(t testing.TB, parent context.Context, still time.Duration) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	t.Cleanup(func() { cancel(nil) })
	go func() {
		last, moved := p.n.Load(), time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if n := p.n.Load(); n != last {
				last, moved = n, time.Now()
			} else if time.Since(moved) > still {
				cancel(fmt.Errorf("load: stuck, nothing moved for %v (%d steps done)", still, n))
				return
			}
		}
	}()
	return ctx
}

// countCalls counts the activity calls a worker completes.
type countCalls struct {
	sdkinterceptor.WorkerInterceptorBase
	p *progress
}

func (c *countCalls) InterceptActivity(ctx context.Context, next sdkinterceptor.ActivityInboundInterceptor) sdkinterceptor.ActivityInboundInterceptor {
	i := &countCall{p: c.p}
	i.Next = next
	return i
}

type countCall struct {
	sdkinterceptor.ActivityInboundInterceptorBase
	p *progress
}

func (c *countCall) ExecuteActivity(ctx context.Context, in *sdkinterceptor.ExecuteActivityInput) (any, error) {
	defer c.p.add()
	return c.Next.ExecuteActivity(ctx, in)
}

// testDeadline is the test's own context: go test's -timeout, less a
// minute so that a test stuck until then fails with its own message.
func testDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-time.Minute))
	}
	t.Cleanup(cancel)
	return ctx
}

// TestLoad runs 200 concurrent guarded workflows of 20 calls each against
// the embedded server, every 4th scripted to stall once; a client resumes
// the halted ones in parallel. Every workflow must end as expected: all
// calls made, exactly one halt for the stalling ones and none for the
// others, no workflow task failure, and every history must replay. It has
// no deadline of its own: it fails when the workload stands still for
// loadStill, however slow the machine. Throughput, guarded and unguarded, is
// BenchmarkLoad's:
//
//	go test -run '^$' -bench BenchmarkLoad -benchtime 1x ./worker/e2e/
func TestLoad(t *testing.T) {
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	var p progress
	ctx := p.watch(t, testDeadline(t), loadStill)

	gq := queueFor(t) + "-guarded"
	stop := loadWorker(t, c, gq, guardPtr(interceptor.Options{}), &p)
	guarded := runLoad(t, ctx, c, gq, true, &p)
	stop()
	require.NoError(t, context.Cause(ctx))

	require.Len(t, guarded.results, loadWorkflows, "no workflow lost")
	stallers := 0
	for id, res := range guarded.results {
		assert.Equal(t, loadCalls, res.Calls, id)
		assert.False(t, res.Escalated, id)
		if guarded.stallers[id] {
			stallers++
		}
	}
	assert.EqualValues(t, stallers, guarded.resumed, "every halted workflow was resumed once")

	// Every history: the expected halts, no workflow task failure, replays.
	var g errgroup.Group
	g.SetLimit(4)
	var mu sync.Mutex
	for id, runID := range guarded.runIDs {
		g.Go(func() error {
			defer p.add()
			h, err := testsuite.ExportHistory(ctx, c, id, runID)
			if err != nil {
				return fmt.Errorf("%w (%v)", err, context.Cause(ctx))
			}
			info := testsuite.Inspect(h)
			want := 0
			if guarded.stallers[id] {
				want = 1
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, want, info.HaltedSignals, "%s: loop.halted signals", id)
			assert.Zero(t, info.WorkflowTaskFailures, "%s: workflow task failures", id)
			assert.True(t, info.Closed && info.Guarded, id)
			return testsuite.ReplayHistory(h, testsuite.ReplayOptions{Register: fixtures.RegisterWorkflows})
		})
	}
	require.NoError(t, g.Wait())
	t.Logf("load: %d workflows × %d calls (%d stalling, halted and resumed) in %.1fs = %.0f calls/s (not asserted: the machine decides)",
		loadWorkflows, loadCalls, stallers, guarded.elapsed.Seconds(), guarded.callsPerSecond())
}

// BenchmarkLoad measures what TestLoad only checks: the throughput of the
// same workload on a guarded worker (halted workflows resumed by a client)
// and on a worker without the guard, one after the other on the shared
// embedded server, reported as calls/s each and their ratio. Each iteration
// runs 2 × 200 workflows; run it once:
//
//	go test -run '^$' -bench BenchmarkLoad -benchtime 1x ./worker/e2e/
func BenchmarkLoad(b *testing.B) {
	srv := sharedServer(b)
	c := devtest.NewClient(b, srv)
	var guarded, unguarded time.Duration
	i := 0
	for b.Loop() {
		var p progress
		ctx := p.watch(b, context.Background(), loadStill)
		gq := fmt.Sprintf("%s-%d-guarded", queueFor(b), i)
		stop := loadWorker(b, c, gq, guardPtr(interceptor.Options{}), &p)
		g := runLoad(b, ctx, c, gq, true, &p)
		stop()
		uq := fmt.Sprintf("%s-%d-unguarded", queueFor(b), i)
		stop = loadWorker(b, c, uq, nil, &p)
		u := runLoad(b, ctx, c, uq, false, &p)
		stop()
		require.NoError(b, context.Cause(ctx))
		require.Len(b, g.results, loadWorkflows)
		require.Len(b, u.results, loadWorkflows)
		guarded += g.elapsed
		unguarded += u.elapsed
		i++
	}
	calls := float64(i * loadWorkflows * loadCalls)
	b.ReportMetric(calls/guarded.Seconds(), "guarded-calls/s")
	b.ReportMetric(calls/unguarded.Seconds(), "unguarded-calls/s")
	b.ReportMetric(unguarded.Seconds()/guarded.Seconds(), "guarded/unguarded")
}

// loadWorker is a fixture worker with more pollers than the SDK's default
// two per task type, so that the server, not the polling, is the limit; it
// counts the calls it completes into p.
func loadWorker(t testing.TB, c client.Client, queue string, guard *interceptor.Options, p *progress) func() {
	w := testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{
		Guard:    guard,
		Register: fixtures.Register,
		Options: worker.Options{
			MaxConcurrentWorkflowTaskPollers: 8,
			MaxConcurrentActivityTaskPollers: 8,
			Interceptors:                     []sdkinterceptor.WorkerInterceptor{&countCalls{p: p}},
		},
	})
	return w.Stop
}

// startLoaded starts a load workflow, trying again when the start's RPC
// timed out while the test's context still runs: on a machine loaded by
// other builds a start can outlast the client's RPC deadline though the
// server goes on. A start that did get through returns the running
// execution the second time (the same workflow id), so none is lost or
// doubled.
func startLoaded(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, turns any) (client.WorkflowRun, error) {
	for try := 1; ; try++ {
		run, err := c.ExecuteWorkflow(ctx, opts, fixtures.WorkflowScripted, turns)
		if err == nil || ctx.Err() != nil || try == 5 || !errors.Is(err, context.DeadlineExceeded) {
			return run, err
		}
	}
}
