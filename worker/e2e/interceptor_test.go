package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// realServer runs scriptLoop on a real in-process Temporal server with the
// guard configured by opts.
type realServer struct {
	t      *testing.T
	srv    *temporaltest.TestServer
	client client.Client
	queue  string
}

func newRealServer(t *testing.T, opts interceptor.Options) *realServer {
	t.Helper()
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	r := &realServer{t: t, srv: srv, client: srv.GetDefaultClient(), queue: "guard-" + t.Name()}
	r.startWorker(opts)
	return r
}

func (r *realServer) startWorker(opts interceptor.Options) worker.Worker {
	var wo worker.Options
	if opts.MaxTotalCalls >= 0 { // a negative value asks for a worker without the guard
		g, err := interceptor.New(opts)
		require.NoError(r.t, err)
		wo.Interceptors = []sdkinterceptor.WorkerInterceptor{g}
	}
	return r.srv.NewWorkerWithOptions(r.queue, registerScript, wo)
}

func (r *realServer) start(ctx context.Context, id string, wf any, args ...any) client.WorkflowRun {
	r.t.Helper()
	run, err := r.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, wf, args...)
	require.NoError(r.t, err)
	return run
}

// waitStatus polls the status query until cond holds.
func (r *realServer) waitStatus(ctx context.Context, id string, cond func(protocol.Status) bool) protocol.Status {
	r.t.Helper()
	for {
		v, err := r.client.QueryWorkflow(ctx, id, "", protocol.DefaultStatusQuery)
		if err == nil {
			var s protocol.Status
			require.NoError(r.t, v.Get(&s))
			if cond(s) {
				return s
			}
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("workflow %s never reached the expected status: %v", id, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// history exports a finished workflow's full history.
func (r *realServer) history(ctx context.Context, id string) *historypb.History {
	r.t.Helper()
	h := &historypb.History{}
	it := r.client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(r.t, err)
		h.Events = append(h.Events, e)
	}
	return h
}

// replay replays h on a replayer with the guard configured by opts; the
// replayer's logs (a failed replay logs the workflow's panic and its stack)
// go to the test's log.
func replay(t *testing.T, h *historypb.History, opts interceptor.Options) error {
	t.Helper()
	ro := worker.WorkflowReplayerOptions{DisableDeadlockDetection: true} // a loaded machine stalls correct code
	if opts.MaxTotalCalls >= 0 {
		g, err := interceptor.New(opts)
		require.NoError(t, err)
		ro.Interceptors = []sdkinterceptor.WorkerInterceptor{g}
	}
	rep, err := worker.NewWorkflowReplayerWithOptions(ro)
	require.NoError(t, err)
	rep.RegisterWorkflow(scriptLoop)
	rep.RegisterWorkflow(continuingLoop)
	return rep.ReplayWorkflowHistory(testLog(t), h)
}

func signalsNamed(h *historypb.History, name string) int {
	n := 0
	for _, e := range h.Events {
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == name {
			n++
		}
	}
	return n
}

// TestRealServerHaltResumeEscalateReplay runs each halt scenario on a real
// server, answers it the way an operator would (signal or update), and
// replays the recorded history with the guard: with the same options, and
// with other options, as after a redeploy.
func TestRealServerHaltResumeEscalateReplay(t *testing.T) {
	opts := interceptor.Options{Nodes: map[string]interceptor.NodeOptions{"Verify": {MetricField: "failing", IgnoreFields: []string{"output", "at"}}}}
	rs := newRealServer(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	type answer func(id string)
	signal := func(name string, payload any) answer {
		return func(id string) { require.NoError(t, rs.client.SignalWorkflow(ctx, id, "", name, payload)) }
	}
	update := func(name string, payload any) answer {
		return func(id string) {
			h, err := rs.client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: id, UpdateName: name, Args: []any{payload}, WaitForStage: client.WorkflowUpdateStageCompleted,
			})
			require.NoError(t, err)
			var d protocol.Decision
			require.NoError(t, h.Get(ctx, &d))
			assert.Equal(t, protocol.Action(name), d.Action)
		}
	}
	tests := []struct {
		name       string
		give       []turn
		answers    []answer
		wantReason []protocol.HaltReason
		wantEsc    bool
		wantCalls  int
	}{
		{"stalled, resumed by signal", repeat(4, "Code", "same"), []answer{signal("resume", map[string]string{"by": "test"})}, []protocol.HaltReason{protocol.ReasonStalled}, false, 4},
		{"stalled, escalated by update", repeat(4, "Code", "same"), []answer{update("escalate", map[string]string{"reason": "stop"})}, []protocol.HaltReason{protocol.ReasonStalled}, true, 4},
		{"oscillating, resumed by update", []turn{{Node: "Code", Output: "A"}, {Node: "Code", Output: "B"}, {Node: "Code", Output: "A"}, {Node: "Code", Output: "B"}, {Node: "Plan", Output: "x"}}, []answer{update("resume", nil)}, []protocol.HaltReason{protocol.ReasonOscillating}, false, 5},
		{"repeated error, escalated by signal", []turn{{Node: "Verify", Err: "boom 1"}, {Node: "Verify", Err: "boom 2"}, {Node: "Verify", Err: "boom 3"}, {Node: "Verify", Output: "ok"}}, []answer{signal("escalate", nil)}, []protocol.HaltReason{protocol.ReasonRepeatedError}, true, 4},
		{"no improvement then budget, resumed twice", codeVerify([]string{"p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}, []int{9, 5, 5, 5, 5, 4, 3, 2, 1}),
			[]answer{signal("resume", nil), signal("resume", map[string]any{"extend": map[string]int{"maxCycleIterations": 1}})},
			[]protocol.HaltReason{protocol.ReasonStalled, protocol.ReasonBudgetExceeded}, false, 18},
		{"converging, never halted", codeVerify([]string{"p1", "p2", "p3"}, []int{5, 2, 0}), nil, nil, false, 6},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprintf("real-%d", i)
			run := rs.start(ctx, id, scriptLoop, tt.give)
			for k, a := range tt.answers {
				s := rs.waitStatus(ctx, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted && s.Halts == k+1 })
				assert.Equal(t, tt.wantReason[k], s.Halt.HaltReason)
				a(id)
			}
			var res loopResult
			require.NoError(t, run.Get(ctx, &res))
			assert.Equal(t, tt.wantCalls, res.Calls)
			assert.Equal(t, tt.wantEsc, res.Escalated)

			h := rs.history(ctx, id)
			assert.Equal(t, len(tt.answers), signalsNamed(h, protocol.DefaultHaltedSignal), "each halt is in the workflow's own history")
			require.NoError(t, replay(t, h, opts), "replay with the same options")
			require.NoError(t, replay(t, h, interceptor.Options{MaxCycleIterations: 2, RepeatThreshold: 2, OnHalt: protocol.OnHaltFail}), "replay after a redeploy with other options")
			if len(tt.answers) > 0 {
				require.Error(t, replay(t, h, interceptor.Options{MaxTotalCalls: -1}), "a halted history needs the guard to replay")
			}
		})
	}
}

// TestRealServerAdoption replays, with the guard, a history recorded before
// the guard was installed, and lets a new guarded worker finish it.
func TestRealServerAdoption(t *testing.T) {
	rs := newRealServer(t, interceptor.Options{MaxTotalCalls: -1}) // no guard
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := rs.start(ctx, "adopt", scriptLoop, repeat(5, "Code", "same"))
	var res loopResult
	require.NoError(t, run.Get(ctx, &res))
	assert.Equal(t, 5, res.Calls, "without the guard the loop runs on")
	h := rs.history(ctx, "adopt")
	require.NoError(t, replay(t, h, interceptor.Options{}), "an unguarded history replays with the guard installed")
}

// TestRealServerNormalPathAddsNoEvents compares the histories of the same
// non-halting workload with and without the guard: the guard may add a
// constant number of events per execution (its version marker, the
// marker's search attribute upsert and the pinned config), never one per
// call.
func TestRealServerNormalPathAddsNoEvents(t *testing.T) {
	rs := newRealServer(t, interceptor.Options{})
	rs.srv.NewWorkerWithOptions("plain-"+t.Name(), registerScript, worker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	count := func(queue, id string, calls int) int {
		var give []turn
		for i := 0; i < calls; i++ {
			give = append(give, turn{Node: nodes[i%3], Output: fmt.Sprintf("out-%d", i)})
		}
		run, err := rs.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, scriptLoop, give)
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
		return len(rs.history(ctx, id).Events)
	}
	for _, calls := range []int{3, 9} {
		guarded := count(rs.queue, fmt.Sprintf("guarded-%d", calls), calls)
		unguarded := count("plain-"+t.Name(), fmt.Sprintf("plain-%d", calls), calls)
		t.Logf("%d calls: %d events guarded, %d unguarded", calls, guarded, unguarded)
		assert.LessOrEqual(t, guarded-unguarded, 3, "%d calls: %d events guarded, %d unguarded", calls, guarded, unguarded)
		assert.GreaterOrEqual(t, guarded-unguarded, 1, "the guard records its pinned config")
	}
}
