package interceptor_test

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/internal/scripted"
)

// countingHandler records counter increments and timer samples by name and
// the guard's own labels (the SDK's namespace, task queue and workflow type
// labels are left out of the key).
type countingHandler struct {
	*recording
	tags map[string]string
}

type recording struct {
	mu     sync.Mutex
	counts map[string]int64
	timers map[string][]time.Duration
	// labels is every label name seen on a loopguard_ metric.
	labels map[string]bool
}

func newCountingHandler() *countingHandler {
	return &countingHandler{recording: &recording{counts: map[string]int64{}, timers: map[string][]time.Duration{}, labels: map[string]bool{}}}
}

// guardLabels are the label names the guard may set.
var guardLabels = map[string]bool{"reason": true, "detector": true, "on_halt": true, "kind": true, "input": true, "decision": true}

func (h *countingHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := map[string]string{}
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return &countingHandler{recording: h.recording, tags: merged}
}

// key names a series, noting the label names of the guard's metrics.
func (h *countingHandler) key(name string) string {
	var parts []string
	for k, v := range h.tags {
		if strings.HasPrefix(name, "loopguard_") {
			h.labels[k] = true
		}
		if guardLabels[k] {
			parts = append(parts, k+"="+v)
		}
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

func (h *countingHandler) Counter(name string) client.MetricsCounter {
	return counterFunc(func(d int64) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.counts[h.key(name)] += d
	})
}

func (h *countingHandler) Timer(name string) client.MetricsTimer {
	return timerFunc(func(d time.Duration) {
		h.mu.Lock()
		defer h.mu.Unlock()
		k := h.key(name)
		h.timers[k] = append(h.timers[k], d)
	})
}

func (h *countingHandler) Gauge(string) client.MetricsGauge {
	return client.MetricsNopHandler.Gauge("")
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }

func TestMetricsCountHaltsDecisionsCallsAndPauseWait(t *testing.T) {
	h := newCountingHandler()
	env := newEnvWithMetrics(t, interceptor.Options{}, h)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("resume", nil) }, decideAfter)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("escalate", nil) }, 2*decideAfter)
	// Stalls after 3 identical outputs, resumed; stalls again 3 later, escalated.
	env.ExecuteWorkflow(scriptLoop, repeat(9, "Code", "same"))
	res := result(t, env)
	require.True(t, res.Escalated)

	c := h.counts
	assert.Equal(t, int64(2), c["loopguard_halts{detector=identical_output,on_halt=pause,reason=stalled}"], "%v", c)
	assert.Equal(t, int64(1), c["loopguard_resumes{reason=stalled}"], "%v", c)
	assert.Equal(t, int64(1), c["loopguard_escalations{reason=stalled}"], "%v", c)
	// Every guarded call is counted, the escalated one included: the
	// denominator of a halt rate.
	assert.Equal(t, int64(res.Calls), c["loopguard_guarded_calls{kind=activity}"], "%v", c)
	assert.Equal(t, 7, res.Calls)

	// Both pauses began at workflow time 0 + activity time (none, mocked
	// activities are instant) and were answered at 1h and 2h.
	assert.Equal(t, []time.Duration{decideAfter}, h.timers["loopguard_pause_wait{decision=resume,reason=stalled}"], "%v", h.timers)
	assert.Equal(t, []time.Duration{decideAfter}, h.timers["loopguard_pause_wait{decision=escalate,reason=stalled}"], "%v", h.timers)
	assert.Zero(t, c["loopguard_rejected_inputs{input=resume}"])
}

func TestMetricsCountRejectedInputsByName(t *testing.T) {
	h := newCountingHandler()
	env := newEnvWithMetrics(t, interceptor.Options{}, h)
	var rejected error
	env.RegisterDelayedCallback(func() {
		// Nothing is halted yet: both refused, the update by its validator.
		env.SignalWorkflow("resume", map[string]string{"reason": "early"})
		env.UpdateWorkflow("escalate", "u1", &testUpdate{onReject: func(err error) { rejected = err }}, nil)
		env.SignalWorkflow("halt", map[string]any{"extend": map[string]int{"maxCallsPerNode": 3}})
	}, time.Minute)
	env.ExecuteWorkflow(scriptLoop, []turn{{Node: "Code", Output: "a"}, {Node: "Code", Output: "b", Sleep: 2 * time.Minute}})
	res := result(t, env)
	require.Error(t, rejected)
	assert.False(t, res.Escalated)

	c := h.counts
	assert.Equal(t, int64(1), c["loopguard_rejected_inputs{input=resume}"], "%v", c)
	assert.Equal(t, int64(1), c["loopguard_rejected_inputs{input=escalate}"], "%v", c)
	assert.Equal(t, int64(1), c["loopguard_rejected_inputs{input=halt}"], "%v", c)
	for k := range c {
		assert.False(t, strings.HasPrefix(k, "loopguard_halts"), "a refused halt signal halted: %v", c)
	}
}

// TestMetricsLabelsAreBounded: a guard metric never carries a workflow id,
// a run id or a node name, whatever the workflow does.
func TestMetricsLabelsAreBounded(t *testing.T) {
	h := newCountingHandler()
	env := newEnvWithMetrics(t, interceptor.Options{}, h)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("escalate", nil) }, decideAfter)
	env.ExecuteWorkflow(scriptLoop, codeVerify([]string{"p1", "p2", "p1", "p2", "p1", "p2"}, []int{3, 3, 3, 3, 3, 3}))
	result(t, env)

	require.NotEmpty(t, h.labels)
	allowed := map[string]bool{"namespace": true, "task_queue": true, "workflow_type": true}
	for k := range guardLabels {
		allowed[k] = true
	}
	for k := range h.labels {
		assert.True(t, allowed[k], "unexpected label %q on a loopguard metric", k)
	}
	for k := range h.counts {
		assert.NotContains(t, k, "Code", "node name in a series: %s", k)
		assert.NotContains(t, k, "Verify", "node name in a series: %s", k)
	}
}

// TestMetricsCountCallsByKind counts activities, local activities and
// child workflows apart, each under its own kind label.
func TestMetricsCountCallsByKind(t *testing.T) {
	h := newCountingHandler()
	env := newEnvWithMetrics(t, interceptor.Options{}, h)
	env.RegisterWorkflow(everyKind)
	env.ExecuteWorkflow(everyKind)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	c := h.counts
	// The child runs one guarded activity of its own.
	assert.Equal(t, int64(2), c["loopguard_guarded_calls{kind=activity}"], "%v", c)
	assert.Equal(t, int64(3), c["loopguard_guarded_calls{kind=local_activity}"], "%v", c)
	assert.Equal(t, int64(1), c["loopguard_guarded_calls{kind=child_workflow}"], "%v", c)
}

// everyKind calls three local activities, one activity and one child
// ScriptLoop of one turn, all with different results (no halt).
func everyKind(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: 10 * time.Second})
	var out agentResult
	for i := range 3 {
		if err := workflow.ExecuteLocalActivity(ctx, scripted.Agent, turn{Node: "Local", Output: strings.Repeat("b", i+1)}, i).Get(ctx, &out); err != nil {
			return err
		}
	}
	if err := workflow.ExecuteActivity(ctx, "Code", turn{Node: "Code", Output: "a"}, 0).Get(ctx, &out); err != nil {
		return err
	}
	return workflow.ExecuteChildWorkflow(ctx, scriptLoop, []turn{{Node: "Verify", Output: "c"}}).Get(ctx, nil)
}

// TestMetricsCountWarnings: warnings are counted by reason and detector;
// a warning the loop heeded is counted once its window passes, or when the
// workflow completes first (5 calls: warned at the 4th), never twice.
func TestMetricsCountWarnings(t *testing.T) {
	for _, calls := range []int{20, 5} {
		h := newCountingHandler()
		env := newEnvWithMetrics(t, interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall}, h)
		env.RegisterWorkflow(guidedLoop)
		env.RegisterActivityWithOptions((&warnedAgent{}).Run, activity.RegisterOptions{Name: "HeedfulAgent"})
		env.ExecuteWorkflow(guidedLoop, calls, false)
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		c := h.counts
		assert.Equal(t, int64(1), c["loopguard_warnings{detector=identical_output,reason=stalled}"], "%d calls: %v", calls, c)
		assert.Equal(t, int64(1), c["loopguard_warnings_heeded{reason=stalled}"], "%d calls: %v", calls, c)
		assert.Zero(t, c["loopguard_halts{detector=identical_output,on_halt=pause,reason=stalled}"])
	}
}
