package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/scripted"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// gauges records the last value of each gauge set through it.
type gauges struct {
	client.MetricsHandler // the no-op handler, for what is not a gauge
	mu                    *sync.Mutex
	values                map[string]float64
}

func newGauges() gauges {
	return gauges{MetricsHandler: client.MetricsNopHandler, mu: new(sync.Mutex), values: map[string]float64{}}
}

func (g gauges) WithTags(map[string]string) client.MetricsHandler { return g }
func (g gauges) Gauge(name string) client.MetricsGauge            { return gauge{g, name} }
func (g gauges) get(name string) float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.values[name]
	if !ok {
		return -1
	}
	return v
}

type gauge struct {
	g    gauges
	name string
}

func (x gauge) Update(v float64) {
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	x.g.values[x.name] = v
}

// attributeServer starts an embedded server with the guard's two search
// attributes registered and a guarded worker of the scripted workflows on
// queue that sets them.
func attributeServer(t *testing.T, queue string) (context.Context, *devserver.Server, client.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	srv := devtest.StartServer(t, devserver.Options{
		Ephemeral: true, FreePorts: true, UIDisabled: true, StartTimeout: 60 * time.Second,
		SearchAttributes: map[string]enumspb.IndexedValueType{
			defaultSearchAttribute:      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			defaultPausedSinceAttribute: enumspb.INDEXED_VALUE_TYPE_DATETIME,
		},
	})
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{
		Guard:    &interceptor.Options{SearchAttribute: defaultSearchAttribute, PausedSinceAttribute: defaultPausedSinceAttribute},
		Register: scripted.Register,
	})
	return ctx, srv, c
}

// TestPausedGaugesCountRunningPausesFromTheServer (issue 14, items 3 and
// 5; issue 17, part 2): three workflows pause; an operator terminates one
// and another reaches its execution timeout while paused. The paused gauge
// counts the one still running (it counted three before: terminated and
// timed-out executions keep "halted:<reason>"), the oldest pause is the
// running one's age from the start the workflow recorded, and a watcher
// that starts afresh (a restarted worker) reports the same age at once.
func TestPausedGaugesCountRunningPausesFromTheServer(t *testing.T) {
	const queue = "paused-gauges"
	ctx, srv, c := attributeServer(t, queue)
	stall := scripted.Repeat(5, "Code", "same")
	var started []time.Time
	for i, timeout := range []time.Duration{5 * time.Minute, 5 * time.Minute, 4 * time.Second} {
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: fmt.Sprintf("paused-%d", i), TaskQueue: queue, WorkflowExecutionTimeout: timeout,
		}, scripted.ScriptLoop, stall)
		require.NoError(t, err)
		started = append(started, time.Now())
		_, err = testsuite.WaitStatus(ctx, c, fmt.Sprintf("paused-%d", i), func(s protocol.Status) bool { return s.State == protocol.StateHalted })
		require.NoError(t, err)
	}
	require.NoError(t, c.TerminateWorkflow(ctx, "paused-1", "", "operator gave up"))

	count := func(q string) int64 {
		resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: srv.Namespace(), Query: q})
		require.NoError(t, err)
		return resp.GetCount()
	}
	stale := defaultSearchAttribute + ` STARTS_WITH "halted"`
	require.Eventually(t, func() bool {
		return count(stale) == 3 && count(interceptor.PausedQuery(defaultSearchAttribute)) == 1
	}, 30*time.Second, 200*time.Millisecond, "closed executions keep their state; the query counts only the running one")

	poll := func() gauges {
		g := newGauges()
		w := newPausedWatcher(c, srv.Namespace(), defaultSearchAttribute, defaultPausedSinceAttribute, g, zap.NewNop())
		require.NoError(t, w.poll(ctx))
		// A second poll checks the figure it found with two counts.
		require.NoError(t, w.poll(ctx))
		return g
	}
	g := poll()
	assert.Equal(t, 1.0, g.get(interceptor.MetricPausedWorkflows))
	age := time.Since(started[0]).Seconds()
	assert.InDelta(t, age, g.get(interceptor.MetricOldestPause), 3, "the running pause's age, from when it began")

	// A worker that restarts finds the same age: it reads the start the
	// workflow recorded, not when the worker first saw the pause.
	time.Sleep(2 * time.Second)
	again := poll()
	assert.InDelta(t, time.Since(started[0]).Seconds(), again.get(interceptor.MetricOldestPause), 3)
	assert.Greater(t, again.get(interceptor.MetricOldestPause), 1.5)

	// Resumed, the last pause leaves the gauges at zero.
	require.NoError(t, c.SignalWorkflow(ctx, "paused-0", "", protocol.DefaultResumeSignal, nil))
	require.Eventually(t, func() bool {
		g := poll()
		return g.get(interceptor.MetricPausedWorkflows) == 0 && g.get(interceptor.MetricOldestPause) == 0
	}, 30*time.Second, 200*time.Millisecond)
}

// TestContinuedRunDoesNotInheritAHalt (issue 14, item 6): a run is
// escalated, handles the escalation and continues as new. The server
// copies the memo and search attributes to the new run, which must show
// itself running, not "escalated:<reason>" of the run before it.
func TestContinuedRunDoesNotInheritAHalt(t *testing.T) {
	const queue, id = "continued", "continued-after-escalation"
	ctx, _, c := attributeServer(t, queue)
	turns := append(scripted.Repeat(4, "Code", "same"), scripted.Turn{Node: "Plan", Output: "next task"}, scripted.Turn{Node: "Research", Output: "found"})
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute},
		scripted.ContinuingLoop, turns, 4)
	require.NoError(t, err)
	_, err = testsuite.WaitStatus(ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted })
	require.NoError(t, err)
	first := run.GetRunID()
	require.NoError(t, c.SignalWorkflow(ctx, id, first, protocol.DefaultEscalateSignal, map[string]string{"by": "ana"}))
	var res scripted.LoopResult
	require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, &res))

	shown := func(runID string) (state string, memo protocol.Status) {
		d, err := c.DescribeWorkflowExecution(ctx, id, runID)
		require.NoError(t, err)
		p := d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[defaultSearchAttribute]
		require.NotNil(t, p, "the state attribute")
		require.NoError(t, converterDecode(p.GetData(), &state))
		m := d.GetWorkflowExecutionInfo().GetMemo().GetFields()["loopguard"]
		require.NotNil(t, m)
		require.NoError(t, converterDecode(m.GetData(), &memo))
		_, since := d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[defaultPausedSinceAttribute]
		assert.False(t, since, "no pause start left behind")
		return state, memo
	}
	state, memo := shown(first)
	assert.Equal(t, "escalated:stalled", state)
	assert.Equal(t, protocol.StateEscalated, memo.State)
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	require.NotEqual(t, first, d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "continued as new")
	state, memo = shown("")
	assert.Equal(t, "running", state, "the continued run is not escalated")
	assert.Equal(t, protocol.StateRunning, memo.State)
}

func converterDecode(data []byte, v any) error { return json.Unmarshal(data, v) }
