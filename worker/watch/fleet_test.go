package watch

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/workflows"
)

// fleetProc is one process of a watch fleet: its own client and a worker
// on the fleet's task queue.
type fleetProc struct {
	name string
	c    client.Client
	w    worker.Worker
	f    *Fleet
	once sync.Once
}

func (ts *testServer) fleetProc(t *testing.T, name string, fo FleetOptions) *fleetProc {
	t.Helper()
	c, err := ts.srv.NewClient(client.Options{Identity: name, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	fo.Client, fo.Identity = c, name
	if fo.Guard.Workflows == nil {
		fo.Guard = workflows.ParallelGuardOptions()
	}
	f, err := NewFleet(fo)
	if err != nil {
		t.Fatal(err)
	}
	p := &fleetProc{name: name, c: c, f: f, w: f.NewWorker(worker.Options{})}
	if err := p.w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return p
}

// stop stops the process as a graceful shutdown does.
func (p *fleetProc) stop() {
	p.once.Do(func() {
		p.w.Stop()
		p.c.Close()
	})
}

// kill loses the process as a crash does: its connection goes first, so
// its shards report nothing and Temporal finds them lost only when their
// heartbeat times out.
func (p *fleetProc) kill() {
	p.once.Do(func() {
		p.c.Close()
		p.w.Stop()
	})
}

// discardLogger is an SDK logger that logs nothing.
func discardLogger() sdklog.Logger { return sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

// shardOf is the shard of a workflow id among n, as Watcher.inShard
// computes it.
func shardOf(id string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}

// idsPerShard returns per ids of prefix for each of n shards.
func idsPerShard(prefix string, n, per int) []string {
	got := make([]int, n)
	var ids []string
	for i := 0; len(ids) < n*per; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if s := shardOf(id, n); got[s] < per {
			got[s]++
			ids = append(ids, id)
		}
	}
	return ids
}

// The fleet on Temporal itself: two processes on one task queue share
// four shards; every looping agent is paused once and a progressing one
// is left alone; a process lost mid-run has its shards restarted on the
// other after the heartbeat timeout, resumed from their heartbeat, and
// no halt is paused twice, neither those answered before the loss nor
// those met after it.
func TestFleetFailover(t *testing.T) {
	const shards = 4
	ctx := testContext(t, 4*time.Minute)
	ts := startServer(t, true)
	a := ts.fleetProc(t, "fleet-a", FleetOptions{})
	b := ts.fleetProc(t, "fleet-b", FleetOptions{})
	in := FleetInput{
		Query: fmt.Sprintf("TaskQueue=%q", plainQueue), Shards: shards,
		PollInterval: 200 * time.Millisecond, HeartbeatTimeout: 3 * time.Second,
	}
	// Every process runs the same command: the second start joins the
	// first's fleet.
	runA, err := a.f.Start(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	runB, err := b.f.Start(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if runA.GetRunID() != runB.GetRunID() {
		t.Fatalf("two fleets: runs %s and %s", runA.GetRunID(), runB.GetRunID())
	}
	if got, err := b.f.Input(ctx); err != nil || got.Shards != shards || got.Query != in.Query {
		t.Errorf("fleet input %+v, %v", got, err)
	}
	shardsUp := func(p *fleetProc, cond func(ShardProgress) bool) func() bool {
		return func() bool {
			ps, err := p.f.Shards(ctx)
			if err != nil || len(ps) != shards {
				return false
			}
			for _, p := range ps {
				if !cond(p) {
					return false
				}
			}
			return true
		}
	}
	eventually(t, ctx, "every shard heartbeating", shardsUp(a, func(ShardProgress) bool { return true }))

	paused := func(id string) int {
		return count(ts.history(t, ctx, id, ""), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED)
	}
	allPausedOnce := func(what string, ids []string) {
		t.Helper()
		eventually(t, ctx, what, func() bool {
			for _, id := range ids {
				if ts.describe(t, ctx, id, "").GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED {
					return false
				}
			}
			return true
		})
	}

	// Two looping agents in each shard, and a progressing one.
	runs := map[string]string{} // workflow id -> run id
	before := idsPerShard("stuck", shards, 2)
	for _, id := range before {
		runs[id] = ts.agent(t, ctx, id, plainQueue, activities.ParallelStuck).GetRunID()
	}
	prog := ts.agent(t, ctx, "progressing", plainQueue, activities.ParallelProgressing)
	allPausedOnce("the looping agents paused", before)
	if err := prog.Get(ctx, nil); err != nil {
		t.Fatalf("progressing agent: %v", err)
	}
	if n := paused("progressing"); n != 0 {
		t.Errorf("progressing agent paused %d times", n)
	}

	// Lose the process that holds a shard (both may), once the shards'
	// heartbeats carry their runs (the SDK sends one at most every 0.8 x
	// the heartbeat timeout).
	eventually(t, ctx, "the runs in every shard's heartbeat", shardsUp(a, func(p ShardProgress) bool { return len(p.Runs) >= 2 }))
	ps, err := a.f.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lost, kept := a, b
	if !strings.HasPrefix(ps[0].Identity, a.name) {
		lost, kept = b, a
	}
	var moved []int
	for _, p := range ps {
		if strings.HasPrefix(p.Identity, lost.name) {
			moved = append(moved, p.Index)
		}
	}
	killed := time.Now()
	lost.kill()
	t.Cleanup(func() {
		if t.Failed() {
			d, err := kept.c.DescribeWorkflowExecution(context.Background(), DefaultFleetWorkflowID, "")
			if err != nil {
				t.Logf("describe: %v", err)
				return
			}
			for _, pa := range d.GetPendingActivities() {
				t.Logf("pending: state %v attempt %d worker %s last failure %v heartbeat %s", pa.GetState(), pa.GetAttempt(),
					pa.GetLastWorkerIdentity(), pa.GetLastFailure().GetMessage(), pa.GetLastHeartbeatTime().AsTime())
			}
		}
	})
	eventually(t, ctx, "the lost shards restarted on the other process", shardsUp(kept, func(p ShardProgress) bool {
		return strings.HasPrefix(p.Identity, kept.name)
	}))
	t.Logf("shards %v moved from %s to %s in %s (heartbeat timeout %s)", moved, lost.name, kept.name,
		time.Since(killed).Round(time.Millisecond), in.HeartbeatTimeout)
	ps, err = kept.f.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range moved {
		// Each moved shard followed its two paused agents: its new
		// attempt follows them at once from the heartbeat.
		if p := ps[i]; p.Attempt < 2 || p.Resumed < 2 {
			t.Errorf("moved shard %d: attempt %d, %d runs resumed from the heartbeat, want >= 2 and >= 2", i, p.Attempt, p.Resumed)
		}
	}

	// Looping agents started after the loss, in every shard.
	after := idsPerShard("late", shards, 1)
	for _, id := range after {
		runs[id] = ts.agent(t, ctx, id, plainQueue, activities.ParallelStuck).GetRunID()
	}
	allPausedOnce("the late looping agents paused", after)
	time.Sleep(2 * in.PollInterval) // a second pause would land by now
	for id := range runs {
		// A pause that failed a task before it started is mended by a
		// reset (pausepoint.go): the run paused is then the reset one.
		runs[id] = ts.describe(t, ctx, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	for _, id := range append(before, after...) {
		events := ts.history(t, ctx, id, "")
		if n := count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 1 {
			t.Errorf("%s (shard %d): %d Paused events, want 1", id, shardOf(id, shards), n)
		}
		// The analysis of the history afterwards finds the halt the
		// fleet paused for, answered by its request id: that halt's, or
		// a newer one's raised before the pause landed (it supersedes
		// the first; seen on slow machines, under -race).
		s := analyse(t, events)
		if len(s.halts()) == 0 || !s.halts()[0].Answered ||
			s.halts()[0].PausedBy != PauseRequestID(id, runs[id], max(history.RequestedHalt(s.halts()[0].PausedBy), s.halts()[0].Verdict.Halt.Seq)) {
			t.Errorf("%s: halts afterwards %+v", id, s.halts())
		}
	}
	// The shards' heartbeats list every halted agent: the fleet's
	// listing of its halts.
	eventually(t, ctx, "every halt listed in the heartbeats", func() bool {
		ps, err := kept.f.Shards(ctx)
		if err != nil {
			return false
		}
		listed := map[string]bool{}
		for _, p := range ps {
			for _, h := range p.Halted {
				if h.Paused && h.RunID == runs[h.WorkflowID] && h.Detector != "" {
					listed[h.WorkflowID] = true
				}
			}
		}
		return len(listed) == len(runs)
	})
}

// A fleet whose query the server rejects fails with the reason, once,
// instead of retrying forever.
func TestFleetBadQuery(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	p := ts.fleetProc(t, "fleet", FleetOptions{WorkflowID: "bad-fleet"})
	run, err := p.f.Start(ctx, FleetInput{Query: "NoSuchAttribute = 1", Shards: 2, HeartbeatTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = run.Get(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "NoSuchAttribute") {
		t.Fatalf("fleet with a bad query: %v", err)
	}
}

// Bad fleet options are refused before anything starts.
func TestFleetOptions(t *testing.T) {
	if _, err := NewFleet(FleetOptions{}); err == nil {
		t.Error("NewFleet without a client: no error")
	}
	if _, err := (FleetInput{Shards: -1}).withDefaults(); err == nil {
		t.Error("Shards -1: no error")
	}
	if _, err := (FleetInput{HeartbeatTimeout: time.Millisecond}).withDefaults(); err == nil {
		t.Error("HeartbeatTimeout 1ms: no error")
	}
	in, err := FleetInput{}.withDefaults()
	if err != nil || in.Shards != 1 || in.HeartbeatTimeout != DefaultHeartbeatTimeout {
		t.Errorf("defaults %+v, %v", in, err)
	}
	f := &Fleet{opts: FleetOptions{Logger: zap.NewNop()}}
	if _, err := f.shardOptions(ShardInput{Fleet: FleetInput{Shards: 2, Policy: `{"warnings": "many"}`}}); err == nil || !strings.Contains(err.Error(), "FleetInput.Policy") {
		t.Errorf("a bad policy: %v", err)
	}
}

// docs/watch.md's Scale-out section states the fleet's names and
// defaults as the code has them.
func TestFleetDocsStateTheDefaults(t *testing.T) {
	sec := docSection(t, "Scale-out")
	for _, want := range []string{
		"`" + FleetWorkflow + "`", "`" + DefaultFleetWorkflowID + "`", "`" + DefaultFleetTaskQueue + "`",
		"`" + ShardActivity + "`", "`" + FleetInputQuery + "`",
		fmt.Sprintf("default %s)", DefaultHeartbeatTimeout),
		fmt.Sprintf("`MaxHeartbeatRuns`, %d,", MaxHeartbeatRuns),
		fmt.Sprintf("`MaxHeartbeatHalts`, %d)", MaxHeartbeatHalts),
		fmt.Sprintf("(%s, its StartToClose timeout)", strings.TrimSuffix(ShardTerm.String(), "0m0s")),
		fmt.Sprintf("the first retry after %d s, doubling to at most %d s", int(retryPolicy.InitialInterval.Seconds()), int(retryPolicy.MaximumInterval.Seconds())),
		fmt.Sprintf("(default %d)", DefaultMaxFollowed),
		fmt.Sprintf("up to %d s old with the default", int(0.8*DefaultHeartbeatTimeout.Seconds())),
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("docs/watch.md, Scale-out: %q not found", want)
		}
	}
}

// The fleet workflow starts one shard activity per shard, with the
// heartbeat timeout and the endless retry, and ends with the error of a
// shard that cannot run.
func TestFleetWorkflow(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// A loaded machine (the embedded servers of other tests) is slow.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Second})
	env.SetTestTimeout(time.Minute)
	env.RegisterWorkflowWithOptions(fleetWorkflow, workflow.RegisterOptions{Name: FleetWorkflow})
	var mu sync.Mutex
	started := map[int]bool{}
	env.RegisterActivityWithOptions(func(ctx context.Context, in ShardInput) error {
		info := activity.GetInfo(ctx)
		mu.Lock()
		defer mu.Unlock()
		started[in.Index] = true
		if info.HeartbeatTimeout != 5*time.Second {
			t.Errorf("shard %d: heartbeat timeout %s", in.Index, info.HeartbeatTimeout)
		}
		if in.Index == 2 {
			// Fail once every shard runs, so that the others are cancelled.
			for deadline := time.Now().Add(10 * time.Second); len(started) < 3 && time.Now().Before(deadline); {
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
			}
			return temporal.NewNonRetryableApplicationError("no such attribute", fleetConfigError, nil)
		}
		mu.Unlock()
		defer mu.Lock()
		for ctx.Err() == nil { // cancellation arrives with a heartbeat
			activity.RecordHeartbeat(ctx)
			time.Sleep(50 * time.Millisecond)
		}
		return ctx.Err()
	}, activity.RegisterOptions{Name: ShardActivity})
	env.ExecuteWorkflow(FleetWorkflow, FleetInput{Shards: 3, HeartbeatTimeout: 5 * time.Second})
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "no such attribute") {
		t.Errorf("fleet workflow: %v", err)
	}
	if len(started) != 3 {
		t.Errorf("shards started: %v", started)
	}
	env = s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(fleetWorkflow, workflow.RegisterOptions{Name: FleetWorkflow})
	env.ExecuteWorkflow(FleetWorkflow, FleetInput{Shards: -2})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "Shards -2") {
		t.Errorf("fleet of -2 shards: %v", err)
	}
}
