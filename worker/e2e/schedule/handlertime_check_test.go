package schedule_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// TestHandlerTimeCheck shows, without a server, that handler-time fails
// on a runtime halt that charged the loop a halt handler's six seconds
// (as a guard that charged them would, at the loop's first call after the
// handler resumed), and passes when the loop's own time explains the
// charge: after the pause is taken off, after an escalation or a
// cancellation (pauses it does not count), after a reset by an earlier
// halt of the same budget, for a loop anchored at a local activity node,
// and across continue-as-new. paused-time fails wherever handler-time
// does, and also on the time of a pause that ended in an escalation or a
// cancellation charged, and passes once that is taken off.
func TestHandlerTimeCheck(t *testing.T) {
	cycle := func(seq int, at float64, charged string) event {
		return timedEcho(seq, detect.DetectorCycleRuntime, "Code", "Code", at, "cycle Code→Verify has run for "+charged+", limit 3s")
	}
	node := func(seq int, at float64, charged string) event {
		return timedEcho(seq, detect.DetectorNodeRuntime, "Code", "Code", at, "Code ran for "+charged+", limit 2s")
	}
	// A loop of Code and Verify from 0 s; at 1.5 s a stall halts it and
	// the halt handler takes six seconds before it resumes (7.5 s).
	slowHandler := []event{
		task(0), call("Code"), task(1), call("Verify"),
		task(1.5), at(1.6, halted(1)), timedEcho(1, detect.DetectorIdenticalOutput, "Code", "Code", 1.5, "Code returned the same output 3 times"),
		task(7.5), at(7.6, running()),
	}
	// The same loop, escalated by the handler after six seconds, goes on.
	slowEscalation := append(clone(slowHandler[:len(slowHandler)-1]), at(7.6, escalated()))
	// The same loop, its workflow cancelled during the pause, goes on in
	// a disconnected context.
	canceled := append(clone(slowHandler[:len(slowHandler)-2]), at(7, cancelRequested()), task(7.5), at(7.6, running()))
	tests := []struct {
		name    string
		give    [][]event
		checked int
		// wantN and wantPaused are the violations of handler-time and of
		// paused-time.
		wantN, wantPaused int
	}{
		{name: "the handler's time charged at the next call", checked: 1, give: [][]event{append(clone(slowHandler), call("Code"), task(8), cycle(2, 8, "8s"))}, wantN: 1, wantPaused: 1},
		{name: "the handler's time taken off", checked: 1, give: [][]event{append(clone(slowHandler), call("Code"), task(12), cycle(2, 12, "6s"))}},
		{name: "a human's time charged", checked: 1, give: [][]event{{
			task(0), call("Code"), task(1), at(1.1, halted(1)), timedEcho(1, detect.DetectorRepeatedError, "Code", "Code", 1, "same error"),
			task(30), at(30.1, running()), call("Code"), task(30.5), cycle(2, 30.5, "30.5s"),
		}}, wantN: 1, wantPaused: 1},
		{name: "an escalation's time charged", checked: 1, give: [][]event{append(clone(slowEscalation), call("Verify"), task(8), cycle(2, 8, "8s"))}, wantPaused: 1},
		{name: "an escalation's time taken off", checked: 1, give: [][]event{append(clone(slowEscalation), call("Verify"), task(8), cycle(2, 8, "2s"))}},
		{name: "a cancellation's time charged", checked: 1, give: [][]event{append(clone(canceled), call("Research"), task(8), cycle(2, 8, "8s"))}, wantPaused: 1},
		{name: "a cancellation's time taken off", checked: 1, give: [][]event{append(clone(canceled), call("Research"), task(8), cycle(2, 8, "2s"))}},
		{name: "a cancelled runtime halt resets nothing", checked: 2, give: [][]event{{
			task(0), call("Code"), task(3), cycle(1, 3, "3s"), at(3.1, halted(1)),
			at(5, cancelRequested()), task(9), at(9.1, running()), call("Code"), task(9.5), cycle(2, 9.5, "3.4s"),
		}}},
		{name: "charged since a reset", checked: 2, give: [][]event{{
			task(0), call("Code"), task(3), node(1, 3, "3s"), at(3.1, halted(1)),
			task(4), at(4.1, running()), call("Code"), task(6), node(2, 6, "3.2s"),
		}}, wantN: 1, wantPaused: 1},
		{name: "within the time since a reset", checked: 2, give: [][]event{{
			task(0), call("Code"), task(3), node(1, 3, "3s"), at(3.1, halted(1)),
			task(4), at(4.1, running()), call("Code"), task(6.5), node(2, 6.5, "2.1s"),
		}}},
		{name: "a loop anchored at a local activity counts from the start", checked: 1, give: [][]event{{
			task(0), call("Code"), task(4), local(), task(5), timedEcho(1, detect.DetectorCycleRuntime, "Lint", "Lint", 5, "cycle Lint→Code has run for 4.5s, limit 3s"),
		}}},
		{name: "across continue-as-new", checked: 1, give: [][]event{
			{task(0), call("Code"), task(1)},
			{task(2), call("Verify"), task(4), cycle(1, 4, "4s")},
		}},
		{name: "across continue-as-new, the handler's time charged", checked: 1, give: [][]event{
			clone(slowHandler),
			{task(8), call("Code"), task(8.5), cycle(2, 8.5, "8.5s")},
		}, wantN: 1, wantPaused: 1},
		{name: "a message without a runtime", checked: 1, give: [][]event{{task(0), call("Code"), task(4), cycle(1, 4, "a while")}}, wantN: 1, wantPaused: 1},
		{name: "another budget is not checked", checked: 0, give: [][]event{{task(0), call("Code"), task(4), timedEcho(1, detect.DetectorNodeCalls, "Code", "Code", 4, "Code reached 10/10 steps")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chain []hist
			for k, run := range tt.give {
				id := "run" + string(rune('0'+k))
				evs := []*historypb.HistoryEvent{{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, EventTime: timestamppb.New(t0),
					Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
						WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{OriginalExecutionRunId: id}}}}
				for _, e := range run {
					ev := e(t)
					if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
						ev = withRunID(t, ev, id)
					}
					evs = append(evs, ev)
				}
				for i, e := range evs {
					e.EventId = int64(i + 1)
				}
				chain = append(chain, hist{name: "run " + string(rune('0'+k)), h: &historypb.History{Events: evs}})
			}
			got := runtimeViolations(chain, converter.GetDefaultDataConverter(), resumedOnly)
			assert.Len(t, got.violations, tt.wantN, "handler-time: %q", got.violations)
			assert.Equal(t, tt.checked, got.checked, "runtime halts checked")
			got = runtimeViolations(chain, converter.GetDefaultDataConverter(), everyPause)
			assert.Len(t, got.violations, tt.wantPaused, "paused-time: %q", got.violations)
		})
	}
}

// TestRuntimePlans: plans with feature runtime run every runtime budget,
// start with a stalled loop, their first two halts' handlers (with
// feature handler) outlast all of them,
// and the driver never raises a runtime budget (handler-time takes a
// resumed runtime halt for a reset).
func TestRuntimePlans(t *testing.T) {
	o := schedule.WithRuntimeBudget(schedule.Profiles[schedule.ProfileTight]())
	assert.Equal(t, schedule.RuntimeBudget, o.MaxCycleRuntime)
	assert.Equal(t, schedule.RuntimeBudget, o.MaxNodeRuntime)
	assert.Equal(t, schedule.RuntimeBudgetOwn, o.Nodes[schedule.RuntimeBudgetNode].MaxRuntime)
	assert.True(t, o.Nodes["Score"].Exempt, "the profile's own node options are kept")
	assert.Zero(t, schedule.Profiles[schedule.ProfileTight]().Nodes[schedule.RuntimeBudgetNode].MaxRuntime, "the profile is not changed")
	for _, b := range []time.Duration{o.MaxCycleRuntime, o.MaxNodeRuntime, o.Nodes[schedule.RuntimeBudgetNode].MaxRuntime} {
		assert.GreaterOrEqual(t, schedule.HandlerSlowSleep, 2*b, "a slow handler outlasts every budget twice")
		assert.Greater(t, schedule.HandlerSlowSleep-b, runtimeMargin)
	}
	for k := range maps.Keys(resumeExtension) {
		assert.NotContains(t, []string{"maxNodeRuntime", "maxCycleRuntime"}, k)
	}
	fs := mustFeatures(t, "all")
	runtime := 0
	for seed := int64(0); seed < 300; seed++ {
		p := schedule.Generate(seed, fs)
		if !p.Runtime {
			continue
		}
		runtime++
		require.GreaterOrEqual(t, len(p.Handlers), 2, "seed %d", seed)
		first := schedule.HandlerSlow
		switch {
		case p.LongPause != "":
			first = schedule.HandlerHuman // the driver takes the long pause
		case slices.Contains(p.Handlers, schedule.HandlerSlowEscalate):
			first = schedule.HandlerSlowEscalate // the handler takes it
		}
		assert.Equal(t, []schedule.HandlerKind{first, schedule.HandlerSlow}, p.Handlers[:2], "seed %d: the first two halts' handlers are slow, but for a long pause", seed)
		require.NotNil(t, p.Runs[0][0].Call, "seed %d", seed)
		assert.Equal(t, "Research stalled output", p.Runs[0][0].Call.Output, "seed %d: the first run starts with the stalled loop", seed)
		assert.Zero(t, p.Options().MaxCycleRuntime-schedule.RuntimeBudget, "seed %d", seed)
	}
	assert.Greater(t, runtime, 50, "about a third of the plans run under runtime budgets")
}

var t0 = time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func clone(evs []event) []event { return append([]event(nil), evs...) }

// at sets the event time of e, s seconds after t0.
func at(s float64, e event) event {
	return func(t *testing.T) *historypb.HistoryEvent {
		ev := e(t)
		ev.EventTime = timestamppb.New(t0.Add(seconds(s)))
		return ev
	}
}

// task is a workflow task started s seconds after t0.
func task(s float64) event {
	return at(s, func(*testing.T) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, Attributes: &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{
			WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{}}}
	})
}

// timedEcho is the loop.halted echo of halt seq, tripped at s seconds.
func timedEcho(seq int, d detect.Detector, node, loop string, s float64, msg string) event {
	return func(t *testing.T) *historypb.HistoryEvent {
		ev := protocol.HaltEvent{Seq: seq, Detector: d, Node: node, Loop: loop, Message: msg, WorkflowTime: t0.Add(seconds(s))}
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, Attributes: &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{
			WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{SignalName: protocol.DefaultHaltedSignal, Input: &commonpb.Payloads{Payloads: []*commonpb.Payload{payload(t, ev)}}}}}
	}
}

// cancelRequested is the workflow's cancellation requested.
func cancelRequested() event {
	return func(*testing.T) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED, Attributes: &historypb.HistoryEvent_WorkflowExecutionCancelRequestedEventAttributes{
			WorkflowExecutionCancelRequestedEventAttributes: &historypb.WorkflowExecutionCancelRequestedEventAttributes{}}}
	}
}

// withRunID sets the run id of an echo's halt.
func withRunID(t *testing.T, e *historypb.HistoryEvent, id string) *historypb.HistoryEvent {
	a := e.GetWorkflowExecutionSignaledEventAttributes()
	var ev protocol.HaltEvent
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(a.GetInput().GetPayloads()[0], &ev))
	ev.RunID = id
	a.Input.Payloads[0] = payload(t, ev)
	return e
}
