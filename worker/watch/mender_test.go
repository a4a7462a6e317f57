package watch

import (
	"fmt"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
)

// TestMenderDue: a mend is due only for a task failed before its start
// by the watcher's own pause, while still paused, with no call closed
// since, and fewer than maxMends mends in the history.
func TestMenderDue(t *testing.T) {
	failed := func(id int64, cause enumspb.WorkflowTaskFailedCause, msg string) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED,
			Attributes: &historypb.HistoryEvent_WorkflowTaskFailedEventAttributes{WorkflowTaskFailedEventAttributes: &historypb.WorkflowTaskFailedEventAttributes{
				Cause: cause, Failure: &failurepb.Failure{Message: msg}}}}
	}
	unstarted := func(id int64) *historypb.HistoryEvent {
		return failed(id, enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED, "")
	}
	paused := func(id int64, requestID string) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionPausedEventAttributes{WorkflowExecutionPausedEventAttributes: &historypb.WorkflowExecutionPausedEventAttributes{
				RequestId: requestID}}}
	}
	plain := func(id int64, typ enumspb.EventType) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventType: typ}
	}
	mine := PauseRequestID("wf", "run", 1)
	mended := func(id int64) *historypb.HistoryEvent {
		return failed(id, enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW, mendReason+" (event 1)")
	}
	tests := []struct {
		name   string
		give   []*historypb.HistoryEvent
		wantTo int64
	}{
		{"the watcher's pause failed a task", []*historypb.HistoryEvent{unstarted(10), paused(11, mine)}, 10},
		{"failure written after the pause", []*historypb.HistoryEvent{paused(10, mine), unstarted(11)}, 11},
		{"an operator's pause", []*historypb.HistoryEvent{unstarted(10), paused(11, "op-1")}, 0},
		{"a pause that failed no task", []*historypb.HistoryEvent{plain(9, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED), paused(10, mine)}, 0},
		{"a call closed since", []*historypb.HistoryEvent{unstarted(10), paused(11, mine), plain(12, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)}, 0},
		{"unpaused since", []*historypb.HistoryEvent{unstarted(10), paused(11, mine), plain(12, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED)}, 0},
		{"mended fewer times than the bound", []*historypb.HistoryEvent{mended(3), mended(5), unstarted(10), paused(11, mine)}, 10},
		{"mended as often as the bound", []*historypb.HistoryEvent{mended(3), mended(5), mended(7), unstarted(10), paused(11, mine)}, 0},
		{"another reset", []*historypb.HistoryEvent{failed(3, enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW, "x"), failed(5, enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW, "x"),
			failed(7, enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW, "x"), unstarted(10), paused(11, mine)}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m mender
			for _, e := range tt.give {
				m.note(e)
			}
			to, ok := m.due()
			if to != tt.wantTo || ok != (tt.wantTo != 0) {
				t.Errorf("due() = %d, %v; want %d", to, ok, tt.wantTo)
			}
			if ok {
				m.asked = to
				if _, again := m.due(); again {
					t.Error("due again once asked")
				}
			}
		})
	}
}

// docs/watch.md states the bound on mends as the code has it.
func TestMendDocsStateTheBound(t *testing.T) {
	sec := docSection(t, "When the watcher pauses")
	for _, want := range []string{fmt.Sprintf("mended at most %d times (`maxMends`", maxMends), "`" + MetricPauseMended + "`", "`" + mendReason[:len("loopguard-watch: mend")] + "`"} {
		if !strings.Contains(sec, want) {
			t.Errorf("docs/watch.md, When the watcher pauses: %q not found", want)
		}
	}
}
