package history

import (
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

func (r *runReader) event(i int, e *historypb.HistoryEvent) {
	defer r.supersedeWhilePaused()
	j := r.judge
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
		if ran, _ := r.startedTask(i); !ran {
			return
		}
		j.Now(e.GetEventTime().AsTime())
		j.Deliver()
		j.Wake()
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
		if idle, _ := r.idleTask(i); idle {
			j.Idle()
		}
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
		// A reset writes this failure right after the events it copies
		// (a reset of a reset run copies the older one's too: the last
		// is the run's own).
		if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW {
			r.ex.Copied = r.ex.Called
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := e.GetActivityTaskScheduledEventAttributes()
		r.call(i, e, interceptor.KindActivity, a.GetActivityType().GetName(), a.GetInput())
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
		r.call(i, e, interceptor.KindChildWorkflow, a.GetWorkflowType().GetName(), a.GetInput())
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
		if !ownWarning(a.GetSignalName(), a.GetRequestId()) {
			r.input(e, a.GetSignalName(), a.GetInput(), false)
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED:
		r.admitted(e)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
		in := r.acceptedRequest(e.GetWorkflowExecutionUpdateAcceptedEventAttributes()).GetInput()
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
		r.published(i, e)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
		j.Cancel()
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED:
		r.paused(e)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED:
		r.unpaused(e)
	default:
		if _, known := enumspb.EventType_name[int32(e.GetEventType())]; !known || e.GetEventType() == enumspb.EVENT_TYPE_UNSPECIFIED {
			r.problem(e, "unknown event type: skipped")
		}
	}
}

// call judges a guarded call's scheduling event.
func (r *runReader) call(i int, e *historypb.HistoryEvent, kind interceptor.CallKind, typ string, input *commonpb.Payloads) {
	if e.GetEventId() == r.held && r.judge.Blocked() {
		// The held call goes on with no decision before it: the halt
		// handler resumed, and the history shows no end of the halt.
		r.handled(i, e, protocol.ActionResume)
	}
	var args []any
	if r.opts.Guard.NodeName != nil {
		args = r.args(e, input)
	}
	if id := r.judge.Call(kind, typ, args); id >= 0 {
		r.calls[e.GetEventId()] = id
		r.called(r.nodeName(kind, typ, args))
	}
}

// nodeName names a call as the guard does (Judge.Node): a NodeName hook
// that panics names it by its type, as live, rather than failing the
// history.
func (r *runReader) nodeName(kind interceptor.CallKind, typ string, args []any) string {
	return r.judge.Node(kind, typ, args)
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
		r.called(r.nodeName(interceptor.KindLocalActivity, typ, nil))
		var err error
		if f := a.GetFailure(); f != nil {
			err = r.fc.FailureToError(f)
		}
		r.judge.Result(id, a.GetDetails()["result"], err, r.dc)
	}
}

// localType is the activity type of local activity marker e, a guarded
// call (not the guard's loop.halted): false for any other event.
func (r *runReader) localType(e *historypb.HistoryEvent) (string, bool) {
	a := e.GetMarkerRecordedEventAttributes()
	var data struct {
		ActivityType     string
		CoreActivityType string `json:"activity_type"`
	}
	switch a.GetMarkerName() {
	case markerLocalActivity, markerCoreLocalActivity:
	default:
		return "", false
	}
	if r.dc.FromPayloads(a.GetDetails()["data"], &data) != nil {
		return "", false
	}
	t := data.ActivityType
	if a.GetMarkerName() == markerCoreLocalActivity {
		t = data.CoreActivityType
	}
	return t, t != "" && t != raiseHaltedActivity
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
func (r *runReader) guardState(e *historypb.HistoryEvent) protocol.State {
	p := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[r.judge.MemoKey()]
	var memo struct {
		State protocol.State `json:"state"`
	}
	if p == nil || r.dc.FromPayload(p, &memo) != nil {
		return ""
	}
	return memo.State
}

// published reads a memo upsert: the guard publishing running or
// escalated while a recorded halt holds a call, with no decision the
// Judge was told of, is the halt handler's decision.
func (r *runReader) published(i int, e *historypb.HistoryEvent) {
	state := r.guardState(e)
	if decided := r.decided; state != "" && decided != 0 {
		r.decided = 0
		if (state == protocol.StateRunning || state == protocol.StateEscalated) && r.judge.Held() != decided {
			// The memo of the decision read before on halt decided, not a
			// halt handler's on the halt its held call raised since.
			return
		}
	}
	if !r.judge.Blocked() {
		return
	}
	switch state {
	case protocol.StateRunning:
		r.handled(i, e, protocol.ActionResume)
	case protocol.StateEscalated:
		r.handled(i, e, protocol.ActionEscalate)
	}
}

// handled hands the halt handler's decision, read at event e (number i), to the
// Judge, and notes it in Recorded when it ended the halt. A resume's
// guidance is read from the notice of the first call that carries it.
func (r *runReader) handled(i int, e *historypb.HistoryEvent, action protocol.Action) {
	rec := &r.ex.Recorded
	// The halt's loop.halted may not be in the history yet: a handler that
	// decides at once does so in the workflow task that raised it.
	seq := r.judge.Held()
	var guidance string
	if action == protocol.ActionResume {
		_, n, _ := r.handlerNotice(i, seq)
		guidance = n.Guidance
	}
	if r.judge.Handled(action, guidance) {
		rec.Answers = append(rec.Answers, RecordedAnswer{Event: e.GetEventId(), Name: string(action), Handler: true,
			Request: protocol.ResumeRequest{By: interceptor.HandlerBy, Guidance: guidance}, HaltSeq: seq})
	}
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
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		t, ok := r.localType(e)
		if !ok {
			return "", false
		}
		return r.nodeName(interceptor.KindLocalActivity, t, nil), true
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
		case protocol.DefaultHaltedSignal:
			var ev protocol.HaltEvent
			if err := r.dc.FromPayload(p, &ev); err != nil {
				r.problem(e, "loop.halted does not decode: %v", err)
			} else {
				rec.Halts = append(rec.Halts, ev)
			}
		case protocol.DefaultResumeSignal, protocol.DefaultEscalateSignal, protocol.DefaultHaltSignal:
			ans := RecordedAnswer{Event: e.GetEventId(), Name: name, Update: update, payload: p}
			if name != protocol.DefaultHaltSignal {
				ans.HaltSeq = rec.unanswered()
			}
			if p != nil {
				var err error
				if ans.Request, ans.Signed, err = recordedRequest(r.dc, p); err != nil {
					ans.Error = err.Error()
				}
			}
			rec.Answers = append(rec.Answers, ans)
		}
	}
	held := r.judge.Held()
	var took bool
	if update {
		took = r.judge.Update(name, p)
	} else {
		took = r.judge.Signal(name, p)
	}
	if took && held != 0 {
		// Input that may decide the halt in force: the guard publishes a
		// decision (running or escalated) before it meets the held call
		// again, which may raise the next halt at once, in the same task.
		r.decided = held
	}
}

// plain returns the single payload of a signal or update with the codecs
// undone, as the guard reads it.
func (r *runReader) plain(e *historypb.HistoryEvent, args *commonpb.Payloads) (*commonpb.Payload, bool) {
	p, problem := plainPayload(r.dc, args)
	if problem != "" {
		r.problem(e, "%s", problem)
	}
	return p, problem == ""
}

// plainPayload is plain without the event: what is wrong with the
// payload, if anything, instead of a problem noted.
func plainPayload(dc converter.DataConverter, args *commonpb.Payloads) (*commonpb.Payload, string) {
	ps := args.GetPayloads()
	if len(ps) == 0 {
		return nil, ""
	}
	p := ps[0]
	if _, ok := encoded(p); ok {
		return p, ""
	}
	var raw converter.RawValue
	if err := dc.FromPayload(p, &raw); err != nil || raw.Payload() == nil {
		return nil, fmt.Sprintf("payload does not decode with the data converter: %v", err)
	}
	if enc, ok := encoded(raw.Payload()); !ok {
		return nil, fmt.Sprintf("payload does not decode with the data converter: still in encoding %q after it (pass the workers' data converter, with their codecs)", enc)
	}
	return raw.Payload(), ""
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

// recordedRequest reads the payload of a resume, escalate or halt as the
// guard may take it: a ResumeRequest (the others' fields are a subset), or
// the SignedAnswer the workers take when operators' keys are set, whose
// request is the Answer's (signed holds it). Only the form is read here:
// whether the guard took a signed answer (its key, signature, window and
// halt) is the Judge's to say. The error is the plain request's when the
// payload is neither.
func recordedRequest(dc converter.DataConverter, p *commonpb.Payload) (protocol.ResumeRequest, *protocol.Answer, error) {
	var req protocol.ResumeRequest
	err := dc.FromPayload(p, &req)
	if err == nil {
		return req, nil, nil
	}
	var sa protocol.SignedAnswer
	if dc.FromPayload(p, &sa) != nil || len(sa.Signature) == 0 || sa.Answer.Action == "" {
		return protocol.ResumeRequest{}, nil, err
	}
	a := sa.Answer
	return protocol.ResumeRequest{Reason: a.Reason, By: a.By, Extend: a.Extend, Guidance: a.Guidance}, &a, nil
}
