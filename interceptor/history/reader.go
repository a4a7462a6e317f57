package history

import (
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// Names of the guard's own local activity and the SDK's markers.
const (
	raiseHaltedActivity = "raiseHaltedSignal"
	markerLocalActivity = "LocalActivity"
	// markerCoreLocalActivity is the local activity marker of the SDKs
	// built on sdk-core.
	markerCoreLocalActivity = "core_local_activity"
	markerVersion           = "Version"
	markerSideEffect        = "SideEffect"
	carryHeader             = "loopguard-carry"
)

// runReader reads one run's events into a Judge.
type runReader struct {
	opts  *Options
	dc    converter.DataConverter
	fc    converter.FailureConverter
	judge *interceptor.Judge
	ex    *Execution
	h     *historypb.History
	// calls maps a call's scheduling event to its Judge id.
	calls map[int64]int
	// attempted are the loop.halted events already used for an Attempt.
	attempted map[int64]bool
	// held is the scheduling event of the call the last recorded halt
	// held (0: none found).
	held int64
	// pauseTimers are the started events of the guard's pause timers.
	pauseTimers map[int64]bool
}

func (r *runReader) problem(e *historypb.HistoryEvent, format string, args ...any) {
	r.ex.Problems = append(r.ex.Problems, fmt.Sprintf("event %d (%s): %s", e.GetEventId(), eventName(e), fmt.Sprintf(format, args...)))
}

func eventName(e *historypb.HistoryEvent) string {
	return e.GetEventType().String()
}

// read judges the run's events in order. A history the reader or the
// guard's code cannot make sense of (events out of any order a server
// writes) gives an error naming the event, never a panic that would stop
// a batch.
func (r *runReader) read() (err error) {
	var at *historypb.HistoryEvent
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("event %d (%s): cannot be judged: %v", at.GetEventId(), eventName(at), p)
		}
	}()
	for i, e := range r.h.GetEvents() {
		at = e
		r.event(i, e)
	}
	return nil
}

func (r *runReader) event(i int, e *historypb.HistoryEvent) {
	j := r.judge
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
		j.Now(e.GetEventTime().AsTime())
		j.Wake()
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
		if r.idleTask(i) {
			j.Idle()
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := e.GetActivityTaskScheduledEventAttributes()
		r.call(e, interceptor.KindActivity, a.GetActivityType().GetName(), a.GetInput())
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		a := e.GetActivityTaskCompletedEventAttributes()
		r.result(e, a.GetScheduledEventId(), a.GetResult(), nil)
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
		a := e.GetActivityTaskFailedEventAttributes()
		r.result(e, a.GetScheduledEventId(), nil, r.fc.FailureToError(a.GetFailure()))
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		a := e.GetActivityTaskTimedOutEventAttributes()
		r.result(e, a.GetScheduledEventId(), nil, r.fc.FailureToError(a.GetFailure()))
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
		a := e.GetActivityTaskCanceledEventAttributes()
		r.result(e, a.GetScheduledEventId(), nil, temporal.NewCanceledError())
	case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
		a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
		r.call(e, interceptor.KindChildWorkflow, a.GetWorkflowType().GetName(), a.GetInput())
	case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED:
		a := e.GetStartChildWorkflowExecutionFailedEventAttributes()
		r.result(e, a.GetInitiatedEventId(), nil, fmt.Errorf("unable to start child workflow: %v", a.GetCause()))
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
		a := e.GetChildWorkflowExecutionCompletedEventAttributes()
		r.result(e, a.GetInitiatedEventId(), a.GetResult(), nil)
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
		a := e.GetChildWorkflowExecutionFailedEventAttributes()
		r.result(e, a.GetInitiatedEventId(), nil, r.fc.FailureToError(a.GetFailure()))
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
		a := e.GetChildWorkflowExecutionTimedOutEventAttributes()
		r.result(e, a.GetInitiatedEventId(), nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil))
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
		a := e.GetChildWorkflowExecutionCanceledEventAttributes()
		r.result(e, a.GetInitiatedEventId(), nil, temporal.NewCanceledError())
	case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
		a := e.GetChildWorkflowExecutionTerminatedEventAttributes()
		r.result(e, a.GetInitiatedEventId(), nil, &temporal.TerminatedError{})
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		r.marker(i, e)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		r.input(e, a.GetSignalName(), a.GetInput(), false)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
		in := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
		r.input(e, in.GetName(), in.GetArgs(), true)
	case enumspb.EVENT_TYPE_TIMER_STARTED:
		j.Timer()
		if j.PauseTimer(e.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration()) {
			r.pauseTimers[e.GetEventId()] = true
		}
	case enumspb.EVENT_TYPE_TIMER_FIRED:
		if r.pauseTimers[e.GetTimerFiredEventAttributes().GetStartedEventId()] {
			j.PauseTimedOut()
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		j.EndRun()
	case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
		r.published(e)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
		j.Cancel()
	default:
		if _, known := enumspb.EventType_name[int32(e.GetEventType())]; !known || e.GetEventType() == enumspb.EVENT_TYPE_UNSPECIFIED {
			r.problem(e, "unknown event type: skipped")
		}
	}
}

// idleTask reports whether the workflow task completed at event i made
// no call, started no timer and did not end the run: the workflow waits
// for something else (workflow.Await on a signal), and the guard's Await
// reads the results that are in.
func (r *runReader) idleTask(i int) bool {
	for _, e := range r.h.GetEvents()[i+1:] {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			return true
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
			enumspb.EVENT_TYPE_MARKER_RECORDED, enumspb.EVENT_TYPE_TIMER_STARTED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
			return false
		}
	}
	return false
}

// call judges a guarded call's scheduling event.
func (r *runReader) call(e *historypb.HistoryEvent, kind interceptor.CallKind, typ string, input *commonpb.Payloads) {
	if e.GetEventId() == r.held && r.judge.Blocked() {
		// The held call goes on with no decision before it: the halt
		// handler resumed, publishing nothing (guard versions 7 and 8).
		r.handled(e, interceptor.ActionResume)
	}
	var args []any
	if r.opts.Guard.NodeName != nil {
		args = r.args(e, input)
	}
	if id := r.judge.Call(kind, typ, args); id >= 0 {
		r.calls[e.GetEventId()] = id
		r.ex.Calls = append(r.ex.Calls, r.nodeName(kind, typ, args))
	}
}

func (r *runReader) nodeName(kind interceptor.CallKind, typ string, args []any) string {
	if f := r.opts.Guard.NodeName; f != nil {
		if n := f(interceptor.Call{Kind: kind, Type: typ, Args: args}); n != "" {
			return n
		}
	}
	return typ
}

// args decodes a call's arguments for Options.NodeName, each into the
// value the data converter makes of it without a Go type (JSON objects
// become map[string]any).
func (r *runReader) args(e *historypb.HistoryEvent, input *commonpb.Payloads) []any {
	args := make([]any, len(input.GetPayloads()))
	for i, p := range input.GetPayloads() {
		if err := r.dc.FromPayload(p, &args[i]); err != nil {
			r.problem(e, "argument %d does not decode with the data converter: %v", i+1, err)
		}
	}
	return args
}

// result hands a call's result or error to the Judge.
func (r *runReader) result(e *historypb.HistoryEvent, scheduled int64, result *commonpb.Payloads, err error) {
	id, ok := r.calls[scheduled]
	if !ok {
		return // not a guarded call
	}
	delete(r.calls, scheduled)
	if result != nil {
		var raw converter.RawValue
		if derr := r.dc.FromPayloads(result, &raw); derr != nil {
			r.problem(e, "result does not decode with the data converter (the guard reads it as empty, as it would live): %v", derr)
		} else if enc, ok := encoded(raw.Payload()); !ok {
			r.problem(e, "result does not decode with the data converter: still in encoding %q after it (pass the workers' data converter, with their codecs)", enc)
		}
	}
	r.judge.Result(id, result, err, r.dc)
}

// marker reads a local activity (a guarded call whose result is in at
// once) or the guard's own loop.halted local activity.
func (r *runReader) marker(i int, e *historypb.HistoryEvent) {
	a := e.GetMarkerRecordedEventAttributes()
	var data struct {
		ActivityType string
		ReplayTime   time.Time
		// The core-based SDKs (Python, TypeScript, .NET, Ruby) name it so.
		CoreActivityType string `json:"activity_type"`
	}
	switch a.GetMarkerName() {
	case markerLocalActivity:
	case markerCoreLocalActivity:
		if err := r.dc.FromPayloads(a.GetDetails()["data"], &data); err != nil || data.CoreActivityType == "" {
			r.problem(e, "local activity marker of a core-based SDK does not decode: %v", err)
			return
		}
		r.localActivity(a, data.CoreActivityType)
		return
	default:
		return
	}
	if err := r.dc.FromPayloads(a.GetDetails()["data"], &data); err != nil {
		r.problem(e, "local activity marker does not decode with the data converter: %v", err)
		return
	}
	if data.ActivityType == "" {
		r.problem(e, "local activity marker names no activity type (another SDK's format?): not counted as a call")
		return
	}
	if data.ActivityType == raiseHaltedActivity {
		r.attempt(i)
	} else {
		r.localActivity(a, data.ActivityType)
	}
	if !data.ReplayTime.IsZero() {
		// The workflow's clock once the local activity is done: a halt
		// handler that decides in this task decides at this time.
		r.judge.Now(data.ReplayTime)
	}
}

// localActivity judges a local activity call of typ, whose result (or
// failure) is in its marker: in at once.
func (r *runReader) localActivity(a *historypb.MarkerRecordedEventAttributes, typ string) {
	if id := r.judge.Call(interceptor.KindLocalActivity, typ, nil); id >= 0 {
		r.ex.Calls = append(r.ex.Calls, r.nodeName(interceptor.KindLocalActivity, typ, nil))
		var err error
		if f := a.GetFailure(); f != nil {
			err = r.fc.FailureToError(f)
		}
		r.judge.Result(id, a.GetDetails()["result"], err, r.dc)
	}
}

// attempt reads the guard's loop.halted local activity, at event i: the
// guard halted a call here, before it was scheduled, and (unless it only
// observed) held or refused it. The held call is the next call the
// history schedules; a refused one is not in the history, and any node
// meets the trip (the halt's own stands for it).
func (r *runReader) attempt(i int) {
	if !r.opts.AsRecorded {
		return
	}
	events := r.h.GetEvents()
	// Its echo comes after it, or (a workflow task that failed and was
	// retried, guard version 1) before it.
	ev, found := r.echo(events[i+1:])
	if !found {
		ev, found = r.echo(events[:i])
	}
	if !found || ev.Observed {
		return
	}
	node := ev.Node
	r.held = 0
	if k := r.heldCall(i, ev.Seq); k > 0 {
		node, _ = r.callNode(events[k])
		r.held = events[k].GetEventId()
	}
	r.judge.Attempt(node)
}

// heldCall finds the call the halt raised at event i held: the first call
// scheduled once the halt ended (0: none). The calls the workflow's halt
// handler made while the halt was in force come before it, unguarded. The
// guard publishes the end of a halt (its memo goes to running or
// escalated) before the held call goes on, so every call before that is
// the handler's; but guard versions 7 and 8 publish nothing when the
// handler resumes (nor, before version 9, when it starts). There the
// handler's calls are taken to be those made in the workflow task that
// raised the halt, where the handler starts, and those before the guard
// publishes the halt (the handler handed it to a human), unless the
// handler's resume gave guidance: then the first call that carries it for
// halt seq is the held call. A version 7 or 8 handler that gives no
// guidance, makes calls in a later task and then resumes is read as
// resumed at the first of them.
func (r *runReader) heldCall(i, seq int) int {
	events := r.h.GetEvents()
	quiet := r.judge.Version() < 9 // a handler's resume publishes nothing
	if k, _ := r.handlerNotice(i+1, seq); quiet && k > 0 {
		return k
	}
	ended, laterTask, candidate := false, false, 0
	for k := i + 1; k < len(events); k++ {
		e := events[k]
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			laterTask = true
		case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
			switch r.guardState(e) {
			case interceptor.StateHalted:
				candidate = 0 // the handler's calls: it handed the halt over
			case interceptor.StateRunning, interceptor.StateEscalated:
				if candidate > 0 {
					return candidate
				}
				ended = true
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			if ended {
				return k
			}
			if quiet && laterTask && candidate == 0 {
				candidate = k
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if candidate > 0 && r.raising(e) {
				return candidate // the next halt
			}
		}
	}
	return candidate
}

// raising reports whether marker e is the guard's loop.halted local
// activity.
func (r *runReader) raising(e *historypb.HistoryEvent) bool {
	a := e.GetMarkerRecordedEventAttributes()
	var data struct{ ActivityType string }
	return a.GetMarkerName() == markerLocalActivity && r.dc.FromPayloads(a.GetDetails()["data"], &data) == nil &&
		data.ActivityType == raiseHaltedActivity
}

// guardState is the state the guard published in a memo upsert, "" when
// the upsert is not the guard's.
func (r *runReader) guardState(e *historypb.HistoryEvent) interceptor.State {
	p := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[r.judge.MemoKey()]
	var memo struct {
		State interceptor.State `json:"state"`
	}
	if p == nil || r.dc.FromPayload(p, &memo) != nil {
		return ""
	}
	return memo.State
}

// published reads a memo upsert: the guard publishing running or
// escalated while a recorded halt holds a call, with no decision the
// Judge was told of, is the halt handler's decision.
func (r *runReader) published(e *historypb.HistoryEvent) {
	if !r.judge.Blocked() {
		return
	}
	switch r.guardState(e) {
	case interceptor.StateRunning:
		r.handled(e, interceptor.ActionResume)
	case interceptor.StateEscalated:
		r.handled(e, interceptor.ActionEscalate)
	}
}

// handled hands the halt handler's decision, read at event e, to the
// Judge, and notes it in Recorded when it ended the halt. A resume's
// guidance is read from the notice of the first call that carries it.
func (r *runReader) handled(e *historypb.HistoryEvent, action interceptor.Action) {
	rec := &r.ex.Recorded
	// The halt's loop.halted may not be in the history yet: a handler that
	// decides at once does so in the workflow task that raised it.
	seq := r.judge.Held()
	var guidance string
	if action == interceptor.ActionResume {
		guidance = r.handlerGuidance(e, seq)
	}
	if r.judge.Handled(action, guidance) {
		rec.Answers = append(rec.Answers, RecordedAnswer{Event: e.GetEventId(), Name: string(action), Handler: true,
			Request: interceptor.ResumeRequest{By: interceptor.HandlerBy, Guidance: guidance}, HaltSeq: seq})
	}
}

// handlerGuidance is the guidance of the halt handler's resume of halt
// seq, read at event e: the notice header of the calls of the loop after
// it carries it (the text, cut as the guard cuts it).
func (r *runReader) handlerGuidance(e *historypb.HistoryEvent, seq int) string {
	events := r.h.GetEvents()
	for i := range events {
		if events[i] == e {
			_, n := r.handlerNotice(i, seq)
			return n.Guidance
		}
	}
	return ""
}

// handlerNotice finds the first call from event index from, before the
// next halt's loop.halted, whose notice carries the guidance of the halt
// handler's resume of halt seq: its index (0: none) and the notice. Calls
// outside the loop carry none.
func (r *runReader) handlerNotice(from, seq int) (int, interceptor.Notice) {
	events := r.h.GetEvents()
	for k := from; k < len(events); k++ {
		var h map[string]*commonpb.Payload
		switch e := events[k]; e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			h = e.GetActivityTaskScheduledEventAttributes().GetHeader().GetFields()
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			h = e.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetHeader().GetFields()
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if k > from && r.raising(e) {
				return 0, interceptor.Notice{}
			}
		}
		var n interceptor.Notice
		if p := h[interceptor.NoticeHeader]; p != nil && converter.GetDefaultDataConverter().FromPayload(p, &n) == nil &&
			n.By == interceptor.HandlerBy && n.HaltSeq == seq {
			return k, n
		}
	}
	return 0, interceptor.Notice{}
}

// echo finds the first loop.halted signal in events not matched to a
// halt yet.
func (r *runReader) echo(events []*historypb.HistoryEvent) (interceptor.HaltEvent, bool) {
	var ev interceptor.HaltEvent
	for _, e := range events {
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a == nil || a.GetSignalName() != interceptor.DefaultHaltedSignal || r.attempted[e.GetEventId()] {
			continue
		}
		if p, ok := r.plain(e, a.GetInput()); ok && p != nil && r.dc.FromPayload(p, &ev) == nil {
			r.attempted[e.GetEventId()] = true
			return ev, true
		}
		return ev, false
	}
	return ev, false
}

// callNode names the node of a guarded call's scheduling event.
func (r *runReader) callNode(e *historypb.HistoryEvent) (string, bool) {
	var kind interceptor.CallKind
	var typ string
	var input *commonpb.Payloads
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := e.GetActivityTaskScheduledEventAttributes()
		kind, typ, input = interceptor.KindActivity, a.GetActivityType().GetName(), a.GetInput()
	case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
		a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
		kind, typ, input = interceptor.KindChildWorkflow, a.GetWorkflowType().GetName(), a.GetInput()
	default:
		return "", false
	}
	var args []any
	if r.opts.Guard.NodeName != nil {
		args = r.args(e, input)
	}
	return r.nodeName(kind, typ, args), true
}

// input hands a signal or an accepted update to the Judge, and notes the
// guard's own in Recorded.
func (r *runReader) input(e *historypb.HistoryEvent, name string, args *commonpb.Payloads, update bool) {
	p, ok := r.plain(e, args)
	if !ok {
		return
	}
	rec := &r.ex.Recorded
	if rec.Guarded {
		switch name {
		case interceptor.DefaultHaltedSignal:
			var ev interceptor.HaltEvent
			if err := r.dc.FromPayload(p, &ev); err != nil {
				r.problem(e, "loop.halted does not decode: %v", err)
			} else {
				rec.Halts = append(rec.Halts, ev)
			}
		case interceptor.DefaultResumeSignal, interceptor.DefaultEscalateSignal, interceptor.DefaultHaltSignal:
			ans := RecordedAnswer{Event: e.GetEventId(), Name: name, Update: update}
			if name != interceptor.DefaultHaltSignal {
				ans.HaltSeq = rec.unanswered()
			}
			if p != nil {
				if err := r.dc.FromPayload(p, &ans.Request); err != nil {
					ans.Error = err.Error()
				}
			}
			rec.Answers = append(rec.Answers, ans)
		}
	}
	if update {
		r.judge.Update(name, p)
		return
	}
	r.judge.Signal(name, p)
}

// plain returns the single payload of a signal or update with the codecs
// undone, as the guard reads it.
func (r *runReader) plain(e *historypb.HistoryEvent, args *commonpb.Payloads) (*commonpb.Payload, bool) {
	ps := args.GetPayloads()
	if len(ps) == 0 {
		return nil, true
	}
	p := ps[0]
	if _, ok := encoded(p); ok {
		return p, true
	}
	var raw converter.RawValue
	if err := r.dc.FromPayload(p, &raw); err != nil || raw.Payload() == nil {
		r.problem(e, "payload does not decode with the data converter: %v", err)
		return nil, false
	}
	if enc, ok := encoded(raw.Payload()); !ok {
		r.problem(e, "payload does not decode with the data converter: still in encoding %q after it (pass the workers' data converter, with their codecs)", enc)
		return nil, false
	}
	return raw.Payload(), true
}

// encoded returns p's encoding and whether it is one of the SDK's own,
// which no codec has touched.
func encoded(p *commonpb.Payload) (string, bool) {
	enc := string(p.GetMetadata()[converter.MetadataEncoding])
	switch enc {
	case converter.MetadataEncodingJSON, converter.MetadataEncodingNil, converter.MetadataEncodingBinary,
		converter.MetadataEncodingProtoJSON, converter.MetadataEncodingProto:
		return enc, true
	}
	return enc, p == nil
}

// workflowInfo is what the guard's scope sees of the run.
func workflowInfo(a *historypb.WorkflowExecutionStartedEventAttributes, runID string) *workflow.Info {
	return &workflow.Info{
		WorkflowExecution:       workflow.Execution{ID: a.GetWorkflowId(), RunID: runID},
		OriginalRunID:           a.GetOriginalExecutionRunId(),
		FirstRunID:              a.GetFirstExecutionRunId(),
		WorkflowType:            workflow.Type{Name: a.GetWorkflowType().GetName()},
		TaskQueueName:           a.GetTaskQueue().GetName(),
		Attempt:                 a.GetAttempt(),
		ContinuedExecutionRunID: a.GetContinuedExecutionRunId(),
	}
}

// recordedGuard reads the guard's version marker (its event) and pinned
// options.
func recordedGuard(h *historypb.History, dc converter.DataConverter) (version int, marker *historypb.HistoryEvent, pinned *commonpb.Payloads) {
	for _, e := range h.GetEvents() {
		a := e.GetMarkerRecordedEventAttributes()
		if a == nil {
			continue
		}
		switch a.GetMarkerName() {
		case markerVersion:
			var id string
			if p := a.GetDetails()["change-id"]; p != nil && dc.FromPayloads(p, &id) == nil && id == "loopguard" {
				_ = dc.FromPayloads(a.GetDetails()["version"], &version)
				marker = e
			}
		case markerSideEffect:
			if version > 0 && pinned == nil {
				return version, marker, a.GetDetails()["data"]
			}
		}
	}
	return version, marker, pinned
}

// errNoStart is the error of a history that does not start with its run.
var errNoStart = errors.New("the history does not start with WorkflowExecutionStarted (truncated at the front?)")
