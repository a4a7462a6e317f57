package schedule_test

import (
	"testing"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// TestResetWindowCheck shows, without a server, that reset-window fails on
// a halt that comes one call after its loop started over (a resume, a
// halt handler's decision or a warning), and passes once the loop made a
// whole minimal window of calls, or when the halt is a budget's.
func TestResetWindowCheck(t *testing.T) {
	tests := []struct {
		name  string
		give  []event
		wantN int
	}{
		{name: "resumed, halted at the next call", give: []event{call("Code"), halted(1), echo(1, detect.DetectorIdenticalOutput), running(), call("Code"), halted(2), echo(2, detect.DetectorIdenticalOutput)}, wantN: 1},
		{name: "handler resumed before the echo, halted at the next call", give: []event{call("Code"), halted(1), running(), call("Code"), echo(1, detect.DetectorIdenticalOutput), halted(2), echo(2, detect.DetectorRepeatedError)}, wantN: 1},
		{name: "resumed, a whole window", give: []event{call("Code"), halted(1), echo(1, detect.DetectorIdenticalOutput), running(), call("Code"), call("Code"), halted(2), echo(2, detect.DetectorIdenticalOutput)}},
		{name: "resumed, a budget halts at once", give: []event{call("Code"), halted(1), echo(1, detect.DetectorIdenticalOutput), running(), call("Code"), halted(2), echo(2, detect.DetectorNodeCalls)}},
		{name: "cancelled while paused: no reset", give: []event{call("Code"), halted(1), echo(1, detect.DetectorIdenticalOutput), cancelRequested(), running(), call("Code"), halted(2), echo(2, detect.DetectorIdenticalOutput)}},
		{name: "a warning first carried after the halt is no reset before it", give: []event{call("Code"), call("Code"), halted(1), echo(1, detect.DetectorIdenticalOutput), cancelRequested(), running(), warned("Code")}},
		{name: "escalated: no reset", give: []event{call("Code"), halted(1), echo(1, detect.DetectorIdenticalOutput), escalated(), call("Code"), halted(2), echo(2, detect.DetectorIdenticalOutput)}},
		{name: "warned, halted at the warned call", give: []event{call("Code"), warned("Code"), echo(1, detect.DetectorEdgeWithoutProgress)}, wantN: 1},
		{name: "warned after a local call, halted at the warned call", give: []event{call("Code"), local(), warned("Code"), echo(1, detect.DetectorEdgeWithoutProgress)}},
		{name: "warned, a whole window", give: []event{call("Code"), warned("Code"), warned("Code"), echo(1, detect.DetectorEdgeWithoutProgress)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := resetWindowViolations(runOf(t, tt.give), converter.GetDefaultDataConverter())
			assert.Len(t, got, tt.wantN, "%q", got)
		})
	}
}

type event func(t *testing.T) *historypb.HistoryEvent

// runOf is the history "run 0" of run id "run": its start, then give.
func runOf(t *testing.T, give []event) hist {
	evs := []*historypb.HistoryEvent{{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
		WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{OriginalExecutionRunId: "run"}}}}
	for _, e := range give {
		evs = append(evs, e(t))
	}
	for i, e := range evs {
		e.EventId = int64(i + 1)
	}
	return hist{name: "run 0", h: &historypb.History{Events: evs}}
}

func payload(t *testing.T, v any) *commonpb.Payload {
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

func call(node string) event {
	return func(*testing.T) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
			ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: node}}}}
	}
}

func local() event {
	return func(*testing.T) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_MARKER_RECORDED, Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{
			MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{MarkerName: "LocalActivity"}}}
	}
}

// warned is a call of node carrying warning 1/1 of loop node.
func warned(node string) event {
	return func(t *testing.T) *historypb.HistoryEvent {
		e := call(node)(t)
		n := protocol.Notice{Warning: &protocol.Warning{Detector: detect.DetectorEdgeWithoutProgress, N: 1, Of: 1, Node: node, Nodes: []string{node}, Loop: node}}
		e.GetActivityTaskScheduledEventAttributes().Header = &commonpb.Header{Fields: map[string]*commonpb.Payload{protocol.NoticeHeader: payload(t, n)}}
		return e
	}
}

func memo(state string, seq int) event {
	return func(t *testing.T) *historypb.HistoryEvent {
		m := map[string]any{"state": state, "seq": seq}
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED, Attributes: &historypb.HistoryEvent_WorkflowPropertiesModifiedEventAttributes{
			WorkflowPropertiesModifiedEventAttributes: &historypb.WorkflowPropertiesModifiedEventAttributes{UpsertedMemo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{"loopguard": payload(t, m)}}}}}
	}
}

func halted(seq int) event { return memo(string(protocol.StateHalted), seq) }
func running() event       { return memo(string(protocol.StateRunning), 0) }
func escalated() event     { return memo("escalated", 1) }

// echo is the loop.halted echo of halt seq of loop Code.
func echo(seq int, d detect.Detector) event {
	return func(t *testing.T) *historypb.HistoryEvent {
		ev := protocol.HaltEvent{Seq: seq, Detector: d, Node: "Code", Loop: "Code", RunID: "run"}
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, Attributes: &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{
			WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{SignalName: protocol.DefaultHaltedSignal, Input: &commonpb.Payloads{Payloads: []*commonpb.Payload{payload(t, ev)}}}}}
	}
}
