package watch

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchHoldsTheTrippingCall: the watcher pauses a stuck agent while
// the workflow task that reads the results deciding the trip is in
// flight, so the call that trips is scheduled and never dispatched
// until the unpause, as the interceptor holds it. The agent's workflow
// tasks take 100 ms a call (as a TypeScript task in its sandbox, or one
// with much history to replay, takes its time), so that the pause lands
// before the task completes; the lag test measures the race with tasks
// as fast as they come (TestWatchLag).
func TestWatchHoldsTheTrippingCall(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	ts.slowWorker(t, "slow", 100*time.Millisecond)
	w, _ := ts.watcher(t, Options{Query: `TaskQueue="slow"`})
	run := ts.agent(t, ctx, "stuck", "slow", activities.ParallelStuck)
	eventually(t, ctx, "the stuck agent paused", func() bool {
		return ts.describe(t, ctx, "stuck", "").GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
	})
	var events []*historypb.HistoryEvent
	eventually(t, ctx, "the Paused event written", func() bool {
		events = ts.history(t, ctx, "stuck", run.GetRunID())
		return count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED) == 1
	})
	after := analyse(t, events)
	if len(after.halts()) != 1 || !after.halts()[0].Answered {
		t.Fatalf("halts %+v: want one, answered", after.halts())
	}
	h := after.halts()[0]
	st := w.Status()
	if st.Ahead != 1 || st.Undone != 0 || st.Pauses != 1 {
		t.Errorf("status: %d pauses, %d ahead, %d undone: want 1, 1, 0", st.Pauses, st.Ahead, st.Undone)
	}
	trip := tripping(events, after, h.Verdict.Call)
	if trip == nil {
		t.Fatalf("no scheduled event for call %d", h.Verdict.Call)
	}
	if paused := eventOf(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); paused.GetEventId() < trip.GetEventId() {
		t.Fatalf("Paused at event %d before the tripping call's %d", paused.GetEventId(), trip.GetEventId())
	}
	if held := heldCalls(t, ctx, ts, "stuck", run.GetRunID(), events, trip); !held {
		t.Fatal("the tripping call was dispatched while paused")
	}
	// The unpause dispatches it.
	if _, err := ts.c.WorkflowService().UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: "stuck", RunId: run.GetRunID(), Identity: "ops", Reason: "looked at it", RequestId: "ops-1"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the held call done after the unpause", func() bool {
		events = ts.history(t, ctx, "stuck", run.GetRunID())
		for _, e := range events {
			if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && a.GetScheduledEventId() == trip.GetEventId() {
				return e.GetEventId() > eventOf(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED).GetEventId()
			}
		}
		return false
	})
}

// TestWatchUndoesAPauseAheadWhoseHaltDidNotCome: with the agent's model
// turn exempt, the trip its searches' results decide is met by the next
// search, not by the model turn the task schedules: the pause ahead
// foresaw a halt that did not come. The watcher undoes it (the model
// turn runs), pauses the halt when its search comes, and the analysis
// afterwards reads the undone pause as answering nothing.
func TestWatchUndoesAPauseAheadWhoseHaltDidNotCome(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	ts.slowWorker(t, "slow", 100*time.Millisecond)
	guard := workflows.ParallelGuardOptions()
	guard.Nodes = map[string]interceptor.NodeOptions{"ModelTurn": {Exempt: true}}
	w, _ := ts.watcher(t, Options{Query: `TaskQueue="slow"`, Guard: guard})
	run := ts.agent(t, ctx, "stuck", "slow", activities.ParallelStuck)
	var events []*historypb.HistoryEvent
	var after snapshot
	eventually(t, ctx, "the halt paused", func() bool {
		if ts.describe(t, ctx, "stuck", "").GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED {
			return false
		}
		events = ts.history(t, ctx, "stuck", run.GetRunID())
		r, err := newReader(guard, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.add(events...)
		after = r.rest()
		hs := after.halts()
		return len(hs) > 0 && hs[len(hs)-1].Answered
	})
	st := w.Status()
	if st.Ahead < 1 || st.Undone < 1 || st.Pauses != st.Undone+1 {
		t.Fatalf("status: %d pauses, %d ahead, %d undone: want pauses ahead undone, and the halt's pause; pauses %+v", st.Pauses, st.Ahead, st.Undone, after.Pauses)
	}
	t.Logf("status: %d pauses, %d ahead, %d undone; pauses %+v", st.Pauses, st.Ahead, st.Undone, after.Pauses)
	for _, e := range events {
		if a := e.GetWorkflowExecutionUnpausedEventAttributes(); a != nil && !strings.Contains(a.GetReason(), "pause ahead undone") {
			t.Errorf("unpaused by %s: %q", a.GetIdentity(), a.GetReason())
		}
	}
	hs := after.halts()
	for _, p := range after.Pauses.List()[:after.Pauses.Len()-1] {
		if p.HaltSeq != 0 || !p.Unpaused {
			t.Errorf("pause %+v: an undone pause ahead answers nothing", p)
		}
	}
	for _, h := range hs {
		if d := h.Verdict.Decision; d != nil {
			t.Errorf("halt %d decided %+v: an undone pause resumes nothing", h.Verdict.Halt.Seq, d)
		}
	}
}

// tripping is the scheduled event of call (counted as the reader counts
// calls) in a run's events.
func tripping(events []*historypb.HistoryEvent, s snapshot, call int) *historypb.HistoryEvent {
	k := call - s.FirstCall
	for _, e := range events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			if k == 0 {
				return e
			}
			k--
		}
	}
	return nil
}

// heldCalls reports whether the call scheduled at event trip was not
// dispatched: no result in events, and pending, not started, in the
// run's description.
func heldCalls(t *testing.T, ctx context.Context, ts *testServer, id, runID string, events []*historypb.HistoryEvent, trip *historypb.HistoryEvent) bool {
	t.Helper()
	for _, e := range events {
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && a.GetScheduledEventId() == trip.GetEventId() {
			return false
		}
	}
	aid := trip.GetActivityTaskScheduledEventAttributes().GetActivityId()
	for _, p := range ts.describe(t, ctx, id, runID).GetPendingActivities() {
		if p.GetActivityId() == aid {
			return p.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED
		}
	}
	return false
}

func eventOf(events []*historypb.HistoryEvent, typ enumspb.EventType) *historypb.HistoryEvent {
	for _, e := range events {
		if e.GetEventType() == typ {
			return e
		}
	}
	return nil
}

// slowWorker runs the sample workflows on queue, their workflow tasks
// taking d for each call they schedule, as a workflow task of an SDK
// with a sandbox, or one with much history to replay, takes its time.
func (ts *testServer) slowWorker(t *testing.T, queue string, d time.Duration) {
	t.Helper()
	ts.worker(t, queue, nil, &taskLatency{d: d})
}

// taskLatency makes workflow code take d before each activity it calls.
type taskLatency struct {
	sdkinterceptor.WorkerInterceptorBase
	d time.Duration
}

func (l *taskLatency) InterceptWorkflow(ctx workflow.Context, next sdkinterceptor.WorkflowInboundInterceptor) sdkinterceptor.WorkflowInboundInterceptor {
	return &slowTask{WorkflowInboundInterceptorBase: sdkinterceptor.WorkflowInboundInterceptorBase{Next: next}, d: l.d}
}

type slowTask struct {
	sdkinterceptor.WorkflowInboundInterceptorBase
	d time.Duration
}

func (s *slowTask) Init(out sdkinterceptor.WorkflowOutboundInterceptor) error {
	return s.Next.Init(&slowCalls{WorkflowOutboundInterceptorBase: sdkinterceptor.WorkflowOutboundInterceptorBase{Next: out}, d: s.d})
}

type slowCalls struct {
	sdkinterceptor.WorkflowOutboundInterceptorBase
	d time.Duration
}

func (s *slowCalls) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if !workflow.IsReplaying(ctx) {
		time.Sleep(s.d) // the test's stand-in for a slow task; it changes no command
	}
	return s.Next.ExecuteActivity(ctx, typ, args...)
}

// TestAheadToUndo: which pause in force a watcher undoes, from the
// history alone (a restarted watcher, or a second one, decides as the one
// that paused would): only this run's watcher pause for a halt that did
// not come, and never one that failed a task waiting to start (mended).
func TestAheadToUndo(t *testing.T) {
	const wf, run = "agent-1", "run-1"
	own := PauseRequestID(wf, run, 1)
	tests := []struct {
		name string
		give func(h *synth)
		want int
	}{
		{"the halt did not come", func(h *synth) { h.task().paused(own) }, 1},
		{"the halt came before the pause (buffered after the task's commands)", func(h *synth) { h.schedule(); h.paused(own) }, 0},
		{"someone else's pause", func(h *synth) { h.task().paused("ui-7f3") }, 0},
		{"another run's request id (a reset copied it)", func(h *synth) { h.task().paused(PauseRequestID(wf, "run-0", 1)) }, 0},
		{"it failed a task waiting to start: mended, not undone", func(h *synth) { h.scheduled().failedUnstarted().paused(own) }, 0},
		{"undone already", func(h *synth) { h.task().paused(own).unpaused() }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSynth(t, wf, run)
			for range 3 {
				h.call("the same answer")
			}
			tt.give(h)
			r, err := newReader(interceptor.Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.add(h.evs...)
			_, got := r.rest().aheadToUndo(wf, run)
			if got != tt.want {
				t.Errorf("aheadToUndo = %d, want %d", got, tt.want)
			}
		})
	}
}

// synth writes a synthetic history of a run with no interceptor.
type synth struct {
	t   *testing.T
	evs []*historypb.HistoryEvent
}

func newSynth(t *testing.T, wf, run string) *synth {
	h := &synth{t: t}
	h.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
		WorkflowType: &commonpb.WorkflowType{Name: "AgentLoop"}, TaskQueue: &taskqueuepb.TaskQueue{Name: "agents"},
		WorkflowId: wf, OriginalExecutionRunId: run, FirstExecutionRunId: run, Attempt: 1}})
	return h.task()
}

func (h *synth) add(typ enumspb.EventType, attrs any) *historypb.HistoryEvent {
	e := &historypb.HistoryEvent{EventId: int64(len(h.evs) + 1), EventType: typ, EventTime: timestamppb.New(time.Unix(1800000000+int64(len(h.evs)), 0))}
	switch a := attrs.(type) {
	case *historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes:
		e.Attributes = a
	case *historypb.HistoryEvent_ActivityTaskScheduledEventAttributes:
		e.Attributes = a
	case *historypb.HistoryEvent_ActivityTaskCompletedEventAttributes:
		e.Attributes = a
	case *historypb.HistoryEvent_WorkflowTaskFailedEventAttributes:
		e.Attributes = a
	case *historypb.HistoryEvent_WorkflowExecutionPausedEventAttributes:
		e.Attributes = a
	case *historypb.HistoryEvent_WorkflowExecutionUnpausedEventAttributes:
		e.Attributes = a
	}
	h.evs = append(h.evs, e)
	return e
}

func (h *synth) scheduled() *synth {
	h.add(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, nil)
	return h
}

func (h *synth) task() *synth {
	h.scheduled()
	h.add(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, nil)
	h.add(enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, nil)
	return h
}

func (h *synth) schedule() *historypb.HistoryEvent {
	return h.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
		ActivityId: strconv.Itoa(len(h.evs) + 1), ActivityType: &commonpb.ActivityType{Name: "Think"}}})
}

// call writes a call of Think that returns result, and the task that
// reads it.
func (h *synth) call(result string) *synth {
	s := h.schedule()
	p, err := converter.GetDefaultDataConverter().ToPayloads(result)
	if err != nil {
		h.t.Fatal(err)
	}
	h.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{
		ScheduledEventId: s.GetEventId(), Result: p}})
	return h.task()
}

func (h *synth) failedUnstarted() *synth {
	h.add(enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, &historypb.HistoryEvent_WorkflowTaskFailedEventAttributes{WorkflowTaskFailedEventAttributes: &historypb.WorkflowTaskFailedEventAttributes{
		Cause: enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED}})
	return h
}

func (h *synth) paused(requestID string) *synth {
	h.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED, &historypb.HistoryEvent_WorkflowExecutionPausedEventAttributes{WorkflowExecutionPausedEventAttributes: &historypb.WorkflowExecutionPausedEventAttributes{
		Identity: PauseIdentity, Reason: "test", RequestId: requestID}})
	return h
}

func (h *synth) unpaused() *synth {
	h.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED, &historypb.HistoryEvent_WorkflowExecutionUnpausedEventAttributes{WorkflowExecutionUnpausedEventAttributes: &historypb.WorkflowExecutionUnpausedEventAttributes{
		Identity: PauseIdentity, Reason: undoneReason}})
	return h
}
