package history

import (
	"github.com/loopguard/loopguard/interceptor/protocol"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
)

// The reader's look-ahead. Judging some events reads events after them;
// each reading below stops at the first event that decides it and says
// whether it was decided (false: the events received ran out before, and
// the run is not closed). An event is judged once its reading is
// decided, so a history fed event by event, or in any chunks, is judged
// exactly as the whole history is.
//
// How far each one reads:
//   - a workflow task's start (startedTask): to the event after it, which
//     says whether the task completed;
//   - a workflow task's completion (idleTask): to its commands, or to
//     the next workflow task;
//   - the guard's version marker and pinned options (recordedGuard): to
//     the end of the first completed workflow task's markers;
//   - with Options.AsRecorded only, the guard's loop.halted local
//     activity (attempt): to its echo, the loop.halted signal (before the
//     next workflow task ends), and to the call the halt held, which
//     comes once the halt ended; and the end of a halt read as the halt
//     handler's (handled): to the first call carrying its guidance. A
//     recorded halt that pauses is judged once its answer is in the
//     history: what the guard did there is known no sooner.
//
// So without AsRecorded (what a watcher of running executions judges),
// the reader holds at most the events of one workflow task ahead.

// ready reports whether event e (number i) can be judged now.
func (r *runReader) ready(i int, e *historypb.HistoryEvent) bool {
	if r.closed {
		return true
	}
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
		_, ok := r.startedTask(i)
		return ok
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
		_, ok := r.idleTask(i)
		return ok
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		if !r.opts.AsRecorded || !r.raising(e) {
			return true
		}
		ev, found, ok := r.echoed(i, false)
		if !ok || !found || ev.Observed {
			return ok
		}
		_, ok = r.heldCall(i)
		return ok
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
		if e.GetEventId() == r.held && r.judge.Blocked() {
			_, _, ok := r.handlerNotice(i, r.judge.Held())
			return ok
		}
	case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
		if r.judge.Blocked() && r.guardState(e) == protocol.StateRunning {
			_, _, ok := r.handlerNotice(i, r.judge.Held())
			return ok
		}
	}
	return true
}

// startedTask reports whether the workflow task started at event i ran
// the workflow: not when the event after it fails the task or times it
// out. The SDK applies the events of a failed task with the next task's,
// at that task's time, as though the failed one never started (it skips
// such a start when it batches events), so a signal delivered in a failed
// task and one delivered after it are taken before the workflow runs
// again. A reset writes such a failure (cause ResetWorkflow) right after
// the events it keeps, and the signals it re-applies come next.
func (r *runReader) startedTask(i int) (ran, decided bool) {
	if i+1 >= r.end() {
		return true, false
	}
	switch r.at(i + 1).GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
		return false, true
	}
	return true, true
}

// idleTask reports whether the workflow task completed at event i made
// no call, started no timer and did not end the run: the workflow waits
// for something else (workflow.Await on a signal), and the guard's Await
// reads the results that are in.
func (r *runReader) idleTask(i int) (idle, decided bool) {
	for k := i + 1; k < r.end(); k++ {
		switch r.at(k).GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			return true, true
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
			enumspb.EVENT_TYPE_MARKER_RECORDED, enumspb.EVENT_TYPE_TIMER_STARTED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
			return false, true
		}
	}
	return false, r.closed
}

// recordedGuard reads the guard's version marker (its event) and pinned
// options. The guard records both first thing in the run's first workflow
// task (GetVersion, then a SideEffect, before the workflow's own code
// runs), so the reading ends at the first event after that task's
// completion that is neither a marker nor a search attribute or memo
// upsert.
func (r *runReader) recordedGuard() (version int, marker *historypb.HistoryEvent, pinned *commonpb.Payloads, decided bool) {
	completed := false
	for k := r.off; k < r.end(); k++ {
		e := r.at(k)
		a := e.GetMarkerRecordedEventAttributes()
		if a == nil {
			switch t := e.GetEventType(); {
			case !completed:
				completed = t == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
			case t != enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES && t != enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
				// GetVersion upserts the TemporalChangeVersion search
				// attribute; any other event ends the task's markers.
				return version, marker, pinned, true
			}
			continue
		}
		switch a.GetMarkerName() {
		case markerVersion:
			var id string
			if p := a.GetDetails()["change-id"]; p != nil && r.dc.FromPayloads(p, &id) == nil && id == "loopguard" {
				_ = r.dc.FromPayloads(a.GetDetails()["version"], &version)
				marker = e
			}
		case markerSideEffect:
			if version > 0 && pinned == nil {
				return version, marker, a.GetDetails()["data"], true
			}
		}
	}
	return version, marker, pinned, r.closed
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
	ev, found, _ := r.echoed(i, true)
	if !found || ev.Observed {
		return
	}
	node := ev.Node
	r.held = 0
	if k, _ := r.heldCall(i); k > 0 {
		node, _ = r.callNode(r.at(k))
		r.held = r.at(k).GetEventId()
	} else if n, ok := r.reraisedNode(i); ok {
		node = n
	}
	r.judge.Attempt(node)
}

// reraisedNode names the node of the call held by the halt raised at
// event i when no event holds the call (the halt was resumed, and a later
// halt raised when the call asked again was escalated, which refused
// it): that later halt's node, when it is a budget's or a stop's, which
// trip on the call admitted. A detector's trip names the node it watched,
// not the call's: then, as when the halt itself was escalated (the next
// halt is the next call's) or no halt follows before another call, the
// node is not known, and the halt's own stands in.
func (r *runReader) reraisedNode(i int) (string, bool) {
	resumed := false
	for k := i + 1; k < r.end(); k++ {
		e := r.at(k)
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
			switch r.guardState(e) {
			case protocol.StateRunning:
				resumed = true
			case protocol.StateEscalated:
				if !resumed {
					return "", false
				}
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			return "", false
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if _, local := r.localType(e); local {
				return "", false
			}
			if !r.raising(e) {
				continue
			}
			ev, found, _ := r.echoed(k, false)
			if !found || !resumed {
				return "", false
			}
			switch ev.HaltReason {
			case protocol.ReasonBudgetExceeded, protocol.ReasonUserStop:
				return ev.Node, true
			}
			return "", false
		}
	}
	return "", false
}

// echoed finds the echo of the halt raised at event i, the loop.halted
// signal of its local activity: the first not matched to a halt yet after
// it, before the next workflow task ends, or (a workflow task that failed
// and was retried) before it. With commit it matches it (and notes a
// payload that does not decode as a problem).
func (r *runReader) echoed(i int, commit bool) (ev protocol.HaltEvent, found, decided bool) {
	for k := i + 1; k < r.end() && !decided; k++ {
		switch e := r.at(k); {
		case r.unmatchedEcho(e):
			if ev, found = r.echo(e, commit); found {
				return ev, true, true
			}
			decided = true
		case taskEnds(e):
			// The local activity signalled while its workflow task ran:
			// the server wrote the signal when that task completed, before
			// any later task ends. None by then: it failed to signal.
			decided = true
		}
	}
	if !decided && !r.closed {
		return ev, false, false
	}
	for n, e := range r.halted {
		if !r.unmatchedEcho(e) {
			continue
		}
		if ev, found = r.echo(e, commit); found && commit {
			r.halted = append(r.halted[:n:n], r.halted[n+1:]...)
		}
		return ev, found, true
	}
	return ev, false, true
}

// taskEnds reports whether e ends a workflow task.
func taskEnds(e *historypb.HistoryEvent) bool {
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
		return true
	}
	return false
}

// unmatchedEcho reports whether e is a loop.halted signal not matched to
// a halt yet.
func (r *runReader) unmatchedEcho(e *historypb.HistoryEvent) bool {
	a := e.GetWorkflowExecutionSignaledEventAttributes()
	return a != nil && a.GetSignalName() == protocol.DefaultHaltedSignal && !r.attempted[e.GetEventId()]
}

// echo reads the halt of loop.halted signal e; with commit it matches it
// to the halt being read.
func (r *runReader) echo(e *historypb.HistoryEvent, commit bool) (protocol.HaltEvent, bool) {
	var ev protocol.HaltEvent
	p, problem := plainPayload(r.dc, e.GetWorkflowExecutionSignaledEventAttributes().GetInput())
	if problem != "" && commit {
		r.problem(e, "%s", problem)
	}
	if problem != "" || p == nil || r.dc.FromPayload(p, &ev) != nil {
		return ev, false
	}
	if commit {
		r.attempted[e.GetEventId()] = true
	}
	return ev, true
}

// heldCall finds the call the halt raised at event i held: the first call
// scheduled once the halt ended (0: none). The calls the workflow's halt
// handler made while the halt was in force come before it, unguarded: the
// guard publishes the end of a halt (its memo goes to running or
// escalated) before the held call goes on, so every call before that is
// the handler's.
func (r *runReader) heldCall(i int) (k int, decided bool) {
	ended := false
	for k := i + 1; k < r.end(); k++ {
		e := r.at(k)
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
			switch r.guardState(e) {
			case protocol.StateEscalated:
				// An escalation refuses the held call (LoopEscalated): it
				// is in no event, and the next call is another.
				return 0, true
			case protocol.StateRunning:
				ended = true
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			if ended {
				return k, true
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if _, local := r.localType(e); ended && local {
				return k, true // a held local activity: its marker is the call
			}
		}
	}
	return 0, r.closed
}

// handlerNotice finds the first call from event index from, before the
// next halt's loop.halted, whose notice carries the guidance of the halt
// handler's resume of halt seq: its index (0: none) and the notice. Calls
// outside the loop carry none.
func (r *runReader) handlerNotice(from, seq int) (int, protocol.Notice, bool) {
	for k := from; k < r.end(); k++ {
		var h map[string]*commonpb.Payload
		switch e := r.at(k); e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			h = e.GetActivityTaskScheduledEventAttributes().GetHeader().GetFields()
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			h = e.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetHeader().GetFields()
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if k > from && r.raising(e) {
				return 0, protocol.Notice{}, true
			}
		}
		var n protocol.Notice
		if p := h[protocol.NoticeHeader]; p != nil && converter.GetDefaultDataConverter().FromPayload(p, &n) == nil &&
			n.By == interceptor.HandlerBy && n.HaltSeq == seq {
			return k, n, true
		}
	}
	return 0, protocol.Notice{}, r.closed
}
