package frameworks

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// native is a history of our shape: the model's words, then its action,
// then the tool's result.
func native() *historypb.History {
	h := &historypb.History{Events: []*historypb.HistoryEvent{{
		EventId: 1, EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{WorkflowId: "w"}},
	}}}
	id := int64(2)
	for _, c := range []struct{ node, out string }{{ModelNode, "Let me look."}, {ModelNode, "grep foo"}, {"bash", "foo.go:1"}} {
		h.Events = append(h.Events, &historypb.HistoryEvent{
			EventId: id, EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: c.node}}},
		}, &historypb.HistoryEvent{
			EventId: id + 1, EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
			Attributes: &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: id, Result: payloads(c.out)}},
		})
		id += 2
	}
	return h
}

// TestMap: the model calls become the integration's model activity with
// its envelope (the tool call with a fresh call_ id, the words before it
// beside it), the text-only call a text response; the tool call keeps its
// type and result.
func TestMap(t *testing.T) {
	callID := regexp.MustCompile(`^call_[A-Za-z0-9]{24}$`)
	for _, tc := range []struct {
		give      Shape
		wantType  string
		wantCall  string // JSON path of the tool call's id in the second model result
		wantWords string // of the words beside it
	}{
		{give: AISDK, wantType: "invokeModel", wantCall: "content.1.toolCallId", wantWords: "content.0.text"},
		{give: OpenAIAgents, wantType: "invokeModelActivity", wantCall: "output.1.callId", wantWords: "output.0.content.0.text"},
	} {
		t.Run(string(tc.give), func(t *testing.T) {
			h := native()
			require.NoError(t, Map(h, tc.give))
			ev := h.Events
			var types []string
			for _, e := range ev {
				if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
					types = append(types, a.GetActivityType().GetName())
				}
			}
			assert.Equal(t, []string{tc.wantType, tc.wantType, "bash"}, types)
			var second any
			require.NoError(t, json.Unmarshal(ev[4].GetActivityTaskCompletedEventAttributes().GetResult().GetPayloads()[0].GetData(), &second))
			assert.Regexp(t, callID, at(second, tc.wantCall))
			assert.Equal(t, "Let me look.", at(second, tc.wantWords))
			out, err := decodeString(ev[6].GetActivityTaskCompletedEventAttributes().GetResult())
			require.NoError(t, err)
			assert.Equal(t, "foo.go:1", out)
		})
	}
}

// at follows a dotted path of keys and indexes.
func at(v any, path string) any {
	for _, k := range regexp.MustCompile(`[^.]+`).FindAllString(path, -1) {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := 0
			for _, c := range k {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
