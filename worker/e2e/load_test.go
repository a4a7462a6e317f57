package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"golang.org/x/sync/errgroup"

	"github.com/loopguard/loopguard/interceptor"
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
// parallel.
func runLoad(t *testing.T, ctx context.Context, c client.Client, queue string, resume bool) loadRun {
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
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute,
			}, fixtures.WorkflowScripted, turns)
			if err != nil {
				return fmt.Errorf("start %d: %w", i, err)
			}
			mu.Lock()
			r.runIDs[id] = run.GetRunID()
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				var res fixtures.Result
				if err := run.Get(ctx, &res); err != nil {
					t.Errorf("%s: %v", id, err)
					return
				}
				mu.Lock()
				r.results[id] = res
				mu.Unlock()
			}()
			return nil
		})
	}
	require.NoError(t, g.Wait())

	if resume {
		go func() {
			wg.Wait()
			close(done)
		}()
		r.resumed = resumeHalted(t, ctx, c, queue, done)
	} else {
		wg.Wait()
	}
	r.elapsed = time.Since(begin)
	return r
}

// resumeHalted lists the queue's running workflows every 100ms and resumes,
// in parallel, each one whose guard memo says "halted", until done.
func resumeHalted(t *testing.T, ctx context.Context, c client.Client, queue string, done <-chan struct{}) int64 {
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
			t.Errorf("load: %v", ctx.Err())
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
			p := e.GetMemo().GetFields()["loopguard"]
			if p == nil || sent[id] {
				continue
			}
			var memo struct {
				State string `json:"state"`
			}
			if json.Unmarshal(p.GetData(), &memo) != nil || memo.State != string(interceptor.StateHalted) {
				continue
			}
			sent[id] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.SignalWorkflow(ctx, id, "", interceptor.DefaultResumeSignal, map[string]string{"by": "load test"}); err != nil {
					t.Errorf("resume %s: %v", id, err)
					return
				}
				resumed.Add(1)
			}()
		}
	}
}

// TestLoad runs 200 concurrent guarded workflows of 20 calls each against
// the embedded server, every 4th scripted to stall once; a client resumes
// the halted ones in parallel. Every workflow must end as expected: all
// calls made, exactly one halt for the stalling ones and none for the
// others, no workflow task failure, and every history must replay. The same
// workload then runs on a worker without the guard, and the throughput of
// both is logged (not asserted: the machine decides). Run
//
//	go test -v -run TestLoad ./testsuite/
//
// to see the figures.
func TestLoad(t *testing.T) {
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()

	gq := queueFor(t) + "-guarded"
	stop := loadWorker(t, c, gq, guardPtr(interceptor.Options{}))
	guarded := runLoad(t, ctx, c, gq, true)
	stop()

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
			h, err := testsuite.ExportHistory(ctx, c, id, runID)
			if err != nil {
				return err
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

	uq := queueFor(t) + "-unguarded"
	loadWorker(t, c, uq, nil)
	unguarded := runLoad(t, ctx, c, uq, false)
	require.Len(t, unguarded.results, loadWorkflows)
	for id, res := range unguarded.results {
		assert.Equal(t, loadCalls, res.Calls, id)
	}

	msg := fmt.Sprintf("load: %d workflows × %d calls (%d stalling, halted and resumed): guarded %.1fs = %.0f calls/s; unguarded %.1fs = %.0f calls/s; guarded/unguarded throughput ratio %.2f",
		loadWorkflows, loadCalls, stallers,
		guarded.elapsed.Seconds(), guarded.callsPerSecond(),
		unguarded.elapsed.Seconds(), unguarded.callsPerSecond(),
		guarded.callsPerSecond()/unguarded.callsPerSecond())
	t.Log(msg)
	fmt.Println(msg)
}

// loadWorker is a fixture worker with more pollers than the SDK's default
// two per task type, so that the server, not the polling, is the limit.
func loadWorker(t *testing.T, c client.Client, queue string, guard *interceptor.Options) func() {
	w := testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{
		Guard:    guard,
		Register: fixtures.Register,
		Options: worker.Options{
			MaxConcurrentWorkflowTaskPollers: 8,
			MaxConcurrentActivityTaskPollers: 8,
		},
	})
	return w.Stop
}
