package history

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// builder writes a synthetic history of an agent that calls one activity
// at a time, as a server writes it, for any SDK's worker.
type builder struct {
	t   *testing.T
	evs []*historypb.HistoryEvent
	now time.Time
}

const (
	testWorkflowID = "agent-1"
	testRunID      = "run-1"
)

func newBuilder(t *testing.T) *builder {
	b := &builder{t: t, now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	b.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			WorkflowType: &commonpb.WorkflowType{Name: "AgentLoop"}, TaskQueue: &taskqueuepb.TaskQueue{Name: "agents"},
			WorkflowId: testWorkflowID, OriginalExecutionRunId: testRunID, FirstExecutionRunId: testRunID, Attempt: 1,
		}}
	})
	return b
}

func (b *builder) add(typ enumspb.EventType, attrs func(e *historypb.HistoryEvent)) *historypb.HistoryEvent {
	b.now = b.now.Add(time.Second)
	e := &historypb.HistoryEvent{EventId: int64(len(b.evs) + 1), EventType: typ, EventTime: timestamppb.New(b.now)}
	if attrs != nil {
		attrs(e)
	}
	b.evs = append(b.evs, e)
	return e
}

func (b *builder) payloads(v ...any) *commonpb.Payloads {
	p, err := converter.GetDefaultDataConverter().ToPayloads(v...)
	if err != nil {
		b.t.Fatal(err)
	}
	return p
}

// task writes a workflow task, scheduled, started and completed; marks
// are the commands it records before any call (markers).
func (b *builder) task(marks ...func()) *builder {
	b.add(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, nil)
	b.add(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, nil)
	b.add(enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, nil)
	for _, m := range marks {
		m()
	}
	return b
}

// calls writes n calls of activity typ that each return result, one a
// workflow task.
func (b *builder) calls(n int, typ, result string) *builder {
	for range n {
		s := b.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityId: "a", ActivityType: &commonpb.ActivityType{Name: typ}, Input: b.payloads("same question"),
			}}
		})
		b.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: s.EventId}}
		})
		b.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: s.EventId, Result: b.payloads(result)}}
		})
		b.task()
	}
	return b
}

// pause writes a Workflow Pause by identity with request id.
func (b *builder) pause(identity, requestID string) *builder {
	b.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionPausedEventAttributes{WorkflowExecutionPausedEventAttributes: &historypb.WorkflowExecutionPausedEventAttributes{
			Identity: identity, Reason: "test", RequestId: requestID}}
	})
	return b
}

// signal writes a signal name with request id, and its workflow task.
func (b *builder) signal(name, requestID string) *builder {
	b.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{
			SignalName: name, Input: b.payloads("{}"), Identity: "someone", RequestId: requestID}}
	})
	return b.task()
}

func (b *builder) unpause(identity string) *builder {
	b.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionUnpausedEventAttributes{WorkflowExecutionUnpausedEventAttributes: &historypb.WorkflowExecutionUnpausedEventAttributes{
			Identity: identity, Reason: "looked at it"}}
	})
	return b
}

func (b *builder) end(typ enumspb.EventType) *builder {
	b.add(typ, nil)
	return b
}

// guardMarker records the interceptor's version marker and its pinned
// options, as the guard does first thing in the first workflow task.
func (b *builder) guardMarker(version int) func() {
	return func() {
		b.add(enumspb.EVENT_TYPE_MARKER_RECORDED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
				MarkerName: markerVersion, Details: map[string]*commonpb.Payloads{"change-id": b.payloads("loopguard"), "version": b.payloads(version)}}}
		})
		b.add(enumspb.EVENT_TYPE_MARKER_RECORDED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
				MarkerName: markerSideEffect, Details: map[string]*commonpb.Payloads{"data": b.payloads(map[string]any{})}}}
		})
	}
}

// read feeds the history to a Reader event by event, checks it agrees
// with the analysis of the whole history, and returns its analysis.
func (b *builder) read(opts Options) Execution {
	b.t.Helper()
	r, err := NewReader(opts)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, e := range b.evs {
		if err := r.Add(e); err != nil {
			b.t.Fatal(err)
		}
	}
	got := r.Close()
	want := batch(b.t, opts, []*historypb.History{{Events: b.evs}})
	sameExecutions(b.t, []Execution{got}, want)
	followed(b.t, opts, [][]*historypb.HistoryEvent{b.evs}, want)
	return got
}

// TestPauseRequestIDAndReason: the request id is derived from the halt
// alone; the reason is short (under 255 bytes, a long node name cut on a
// rune boundary) and says detector, node, loop and where the evidence is.
func TestPauseRequestIDAndReason(t *testing.T) {
	if got := PauseRequestID("agent-1", "run-1", 3); got != "loopguard-halt:run-1:3" {
		t.Errorf("PauseRequestID = %q", got)
	}
	for give, want := range map[string]int{"loopguard-halt:run-1:3": 3, "loopguard-halt:other-run:12": 12,
		"loopguard-halt:run-1:x": 0, "loopguard-halt:": 0, "ui-7f3": 0, "": 0} {
		if got := RequestedHalt(give); got != want {
			t.Errorf("RequestedHalt(%q) = %d, want %d", give, got, want)
		}
	}
	ev := protocol.HaltEvent{Detector: "identical_output", Node: "Think", Iteration: 3, MaxIterations: 8}
	if got, want := PauseReason(ev), "loopguard: identical_output on Think, loop 3/8; evidence: watcher log and /status, or worker analyze"; got != want {
		t.Errorf("PauseReason = %q, want %q", got, want)
	}
	ev.Node = strings.Repeat("é", 300)
	if got := PauseReason(ev); len(got) >= 255 || !strings.HasSuffix(got, "…, loop 3/8; evidence: watcher log and /status, or worker analyze") {
		t.Errorf("PauseReason of a long node: %d bytes: %q", len(got), got)
	}
}

// identicalFirst checks the calls of ex's first halts for identical
// outputs: the detector a resume resets in the synthetic loop (its
// budgets trip on their own count).
func identicalFirst(t *testing.T, ex Execution, want ...int) {
	t.Helper()
	var got []int
	for _, v := range ex.Verdicts {
		if v.Halt != nil && v.Halt.Detector == "identical_output" {
			got = append(got, v.Call)
		}
	}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("identical-output halts at calls %v, want %v first", got, want)
	}
}

// TestWorkflowPauseAnswersHalts: Workflow Pause events in the history of
// a run no interceptor guards, read as a watcher's halts are answered.
// The synthetic loop repeats one call with the same answer: left alone
// (observe), it halts for identical outputs at calls 4 and 7 (the lag
// calls after a halt count towards the next); a resume makes the next
// such halt wait for three calls after it.
func TestWorkflowPauseAnswersHalts(t *testing.T) {
	watcher := func(seq int) string { return PauseRequestID(testWorkflowID, testRunID, seq) }
	tests := []struct {
		name  string
		give  func(b *builder)
		check func(t *testing.T, ex Execution)
	}{{
		name: "left alone: halts at 4 and 7",
		give: func(b *builder) { b.calls(12, "Think", "same") },
		check: func(t *testing.T, ex Execution) {
			identicalFirst(t, ex, 4, 7)
			if p := ex.Pending(); p == nil || p.Seq != len(ex.Halts()) {
				t.Fatalf("pending %+v: want the newest halt", p)
			}
		},
	}, {
		name: "the watcher's pause, 2 lag calls, unpause: the loop starts over",
		give: func(b *builder) {
			b.calls(6, "Think", "same").pause(PauseIdentity, watcher(1)).unpause("ops").calls(6, "Think", "same")
		},
		check: func(t *testing.T, ex Execution) {
			identicalFirst(t, ex, 4, 9) // three calls after the unpause at 6
			p := ex.Pauses.At(0)
			if p.HaltSeq != 1 || len(p.Superseded) != 0 || !p.ByWatcher() || !p.Unpaused || p.UnpausedBy != "ops" {
				t.Fatalf("pause %+v: want halt 1 answered by the watcher, unpaused by ops", p)
			}
			if d := ex.Verdicts[0].Decision; d == nil || d.Action != protocol.ActionResume || d.By != "ops" || d.HaltSeq != 1 {
				t.Fatalf("halt 1's decision %+v: want a resume by ops", d)
			}
		},
	}, {
		name: "a human's pause answers the waiting halt too",
		give: func(b *builder) {
			b.calls(6, "Think", "same").pause("alice@ops", "ui-7f3").unpause("alice@ops").calls(6, "Think", "same")
		},
		check: func(t *testing.T, ex Execution) {
			identicalFirst(t, ex, 4, 9)
			if p := ex.Pauses.At(0); p.HaltSeq != 1 || p.ByWatcher() {
				t.Fatalf("pause %+v: want halt 1 answered by a human", p)
			}
		},
	}, {
		name: "halts raised while the pause holds (the task in flight when it landed) are its too",
		give: func(b *builder) {
			b.calls(4, "Think", "same").pause(PauseIdentity, watcher(1)).calls(3, "Think", "same").unpause("ops").calls(30, "Think", "same")
		},
		check: func(t *testing.T, ex Execution) {
			// The unpause at 7 resumes halt 1 and the loop starts over;
			// it halts again at 14 (after a halt observed while paused
			// the Judge's ladder needs more than the 3 calls of a plain
			// resume), the same live and afterwards.
			identicalFirst(t, ex, 4, 7, 14)
			if p := ex.Pauses.At(0); p.HaltSeq != 1 || !slices.Equal(p.Superseded, []int{2}) {
				t.Fatalf("pause %+v: want halt 1 answered and halt 2, raised while paused, superseded", p)
			}
			if p := ex.Pending(); p == nil || p.Seq == 2 {
				t.Fatalf("pending %+v: want a halt after the unpause, never halt 2", p)
			}
		},
	}, {
		name: "the watcher's own loop.warning signals are not outside input",
		give: func(b *builder) {
			b.calls(2, "Think", "same").signal(WarningSignal, WarningRequestID(testRunID, 2)).calls(10, "Think", "same")
		},
		check: func(t *testing.T, ex Execution) { identicalFirst(t, ex, 4, 7) },
	}, {
		name: "anyone else's signal is outside input",
		give: func(b *builder) {
			b.calls(2, "Think", "same").signal(WarningSignal, "someone-else").calls(10, "Think", "same")
		},
		check: func(t *testing.T, ex Execution) { identicalFirst(t, ex, 6) }, // the barrier: two more calls
	}, {
		name: "someone else's pause with no halt waiting changes nothing",
		give: func(b *builder) {
			b.calls(2, "Think", "same").pause("maintenance", "m-1").unpause("maintenance").calls(10, "Think", "same")
		},
		check: func(t *testing.T, ex Execution) {
			identicalFirst(t, ex, 4, 7) // as left alone
			if p := ex.Pauses.At(0); p.HaltSeq != 0 || len(p.Superseded) != 0 || !p.Unpaused {
				t.Fatalf("pause %+v: want no halt answered", p)
			}
			for _, v := range ex.Verdicts {
				if v.Decision != nil {
					t.Fatalf("a verdict got a decision %+v", v.Decision)
				}
			}
		},
	}, {
		name: "halts in the lag: the watcher's pause for the newest supersedes the first",
		give: func(b *builder) { b.calls(7, "Think", "same").pause(PauseIdentity, watcher(2)) },
		check: func(t *testing.T, ex Execution) {
			p := ex.Pauses.At(0)
			if p.HaltSeq != 2 || len(p.Superseded) != 1 || p.Superseded[0] != 1 {
				t.Fatalf("pause %+v: want halt 2 answered, 1 superseded", p)
			}
			if len(ex.Unanswered()) != 0 || ex.Pending() != nil || ex.Paused() == nil {
				t.Fatalf("unanswered %v, pending %v, paused %v: want none, none, the pause", ex.Unanswered(), ex.Pending(), ex.Paused())
			}
		},
	}, {
		name: "the watcher's pause names the run it paused (a reset run's history names its base run)",
		give: func(b *builder) {
			b.calls(7, "Think", "same").pause(PauseIdentity, PauseRequestID(testWorkflowID, "reset-run", 2))
		},
		check: func(t *testing.T, ex Execution) {
			if p := ex.Pauses.At(0); p.HaltSeq != 2 || len(p.Superseded) != 1 || !p.ByWatcher() {
				t.Fatalf("pause %+v: want halt 2 answered, 1 superseded", p)
			}
		},
	}, {
		name: "halts in the lag: a human's pause answers the first, supersedes the rest",
		give: func(b *builder) { b.calls(7, "Think", "same").pause("alice", "x") },
		check: func(t *testing.T, ex Execution) {
			if p := ex.Pauses.At(0); p.HaltSeq != 1 || len(p.Superseded) != 1 || p.Superseded[0] != 2 {
				t.Fatalf("pause %+v: want halt 1 answered, 2 superseded", p)
			}
		},
	}, {
		name: "terminated while paused: the pause ends with the run",
		give: func(b *builder) {
			b.calls(4, "Think", "same").pause(PauseIdentity, watcher(1)).end(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED)
		},
		check: func(t *testing.T, ex Execution) {
			p := ex.Pauses.At(0)
			if !ex.Closed || ex.Paused() != nil || p.Unpaused || p.Ended != ex.LastEvent || p.HaltSeq != 1 {
				t.Fatalf("closed %v, pause %+v: want the pause of halt 1 ended by the termination", ex.Closed, p)
			}
			if ex.Verdicts[0].Decision != nil {
				t.Fatalf("a terminated pause resumed halt 1: %+v", ex.Verdicts[0].Decision)
			}
		},
	}, {
		name: "canceled while paused: the pause ends with the run",
		give: func(b *builder) {
			b.calls(4, "Think", "same").pause(PauseIdentity, watcher(1)).
				end(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED).end(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED)
		},
		check: func(t *testing.T, ex Execution) {
			if p := ex.Pauses.At(0); !ex.Closed || ex.Paused() != nil || p.Unpaused || p.Ended != ex.LastEvent {
				t.Fatalf("closed %v, pause %+v: want the pause ended by the cancellation", ex.Closed, p)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(t).task()
			tt.give(b)
			ex := b.read(Options{})
			if !ex.Pausable || ex.Recorded.Version != 0 {
				t.Fatalf("pausable %v, guard version %d: want a run no interceptor guards", ex.Pausable, ex.Recorded.Version)
			}
			tt.check(t, ex)
		})
	}
}

// TestGuardedRunRecognised: a run the interceptor guards is known from
// its first workflow task (the guard's version marker): it is not
// Pausable, and a pause answers none of the analysis's halts, which are
// the interceptor's to raise. A run without the marker is Pausable from
// the same point.
func TestGuardedRunRecognised(t *testing.T) {
	for _, version := range []int{0, 12} {
		b := newBuilder(t)
		if version > 0 {
			b.task(b.guardMarker(version))
		} else {
			b.task()
		}
		first := len(b.evs)
		b.calls(6, "Think", "same").pause("alice", "x")
		r, err := NewReader(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Add(b.evs[:first+1]...); err != nil { // the first task and the call after it
			t.Fatal(err)
		}
		ex := r.Execution()
		if ex.Recorded.Version != version || ex.Pausable != (version == 0) || ex.LastEvent < int64(first) {
			t.Fatalf("after the first task: guard version %d, pausable %v, judged up to %d: want %d, %v, %d",
				ex.Recorded.Version, ex.Pausable, ex.LastEvent, version, version == 0, first)
		}
		if err := r.Add(b.evs[first+1:]...); err != nil {
			t.Fatal(err)
		}
		ex = r.Close()
		if got := ex.Pauses.At(0).HaltSeq; (got == 0) != (version > 0) {
			t.Fatalf("guard version %d: the pause answered halt %d", version, got)
		}
		if version > 0 && (ex.Unanswered() != nil || ex.Pending() != nil) {
			t.Fatalf("a guarded run has halts for a watcher: %v", ex.Unanswered())
		}
	}
}
