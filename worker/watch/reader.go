package watch

import (
	"fmt"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
)

// This file is the watcher's one seam with the reading of histories: a
// reader fed a growing history, and the snapshot the watcher acts on.
//
// TEMPORARY: until interceptor/history reads a growing history
// incrementally (history.NewReader, Add, Execution, Close) and answers
// halts with the Workflow Pause events itself, the reader re-reads the
// whole history so far with history.Analyzer and works out the pause
// state from those events here. Only this file changes when it does.

// PauseIdentity prefixes the identity the watcher pauses with.
const PauseIdentity = "loopguard-watch"

// requestIDPrefix begins the request id of every pause the watcher asks
// for.
const requestIDPrefix = "loopguard-halt:"

// maxReasonBytes bounds a pause's reason: the server refuses a reason
// longer than its ID length limit (1000 bytes by default).
const maxReasonBytes = 255

// PauseRequestID is the request id of the pause that answers halt seq of
// a run: derived from the halt alone, so that a restarted watcher, or a
// second one, asks for the same pause, and the server takes a repeated
// request while paused as done.
func PauseRequestID(workflowID, runID string, haltSeq int) string {
	return requestIDPrefix + runID + ":" + strconv.Itoa(haltSeq)
}

// PauseReason is a pause's reason: the detector, the node, the loop's
// count and where the full evidence is, in less than 255 bytes.
func PauseReason(ev interceptor.HaltEvent) string {
	s := fmt.Sprintf("loopguard: %s on %s", ev.Detector, ev.Node)
	if ev.MaxIterations > 0 {
		s += fmt.Sprintf(", loop %d/%d", ev.Iteration, ev.MaxIterations)
	}
	s += "; evidence: worker watch status / log"
	if len(s) > maxReasonBytes {
		s = s[:maxReasonBytes]
	}
	return s
}

// halt is one halt of a snapshot and how the history answered it.
type halt struct {
	Verdict interceptor.Verdict
	// EventID and Time are those of the event of the call that tripped.
	EventID int64
	Time    time.Time
	// Answered is set once a Workflow Pause event follows the halt;
	// PausedBy is that pause's request id, PausedAt its time, and
	// CallsBefore the calls scheduled between the trip and the pause
	// (the lag).
	Answered    bool
	PausedBy    string
	PausedAt    time.Time
	CallsBefore int
}

// snapshot is what the history read so far says of one run.
type snapshot struct {
	WorkflowType, WorkflowID, RunID string
	// GuardVersion is the interceptor's guard version recorded in the
	// history (0: the run is not guarded by the interceptor).
	GuardVersion int
	// Guarded says whether the watcher's options guard the run.
	Guarded  bool
	Verdicts []interceptor.Verdict
	Halts    []halt
	// Paused is set while the run is paused; PauseRequestID and
	// PauseIdentity are the pause's.
	Paused         bool
	PauseRequestID string
	PauseIdentity  string
	Closed         bool
	LastEventID    int64
	Problems       []string
	Err            error
}

// pending is the newest halt no pause answered yet, or nil.
func (s *snapshot) pending() *halt {
	for i := len(s.Halts) - 1; i >= 0; i-- {
		if !s.Halts[i].Answered {
			return &s.Halts[i]
		}
		return nil
	}
	return nil
}

// reader reads one run's growing history.
type reader struct {
	opts   history.Options
	events []*historypb.HistoryEvent
	snap   snapshot
}

func newReader(opts interceptor.Options) (*reader, error) {
	ao := history.Options{Guard: opts}
	if _, err := history.NewAnalyzer(ao); err != nil {
		return nil, err
	}
	return &reader{opts: ao}, nil
}

// add appends events, in history order, and judges them.
func (r *reader) add(events ...*historypb.HistoryEvent) {
	if len(events) == 0 && len(r.events) > 0 {
		return
	}
	r.events = append(r.events, events...)
	a, _ := history.NewAnalyzer(r.opts)
	ex := a.History(&historypb.History{Events: r.events}, "")
	s := snapshot{
		WorkflowType: ex.WorkflowType, WorkflowID: ex.WorkflowID, RunID: ex.RunID,
		GuardVersion: ex.Recorded.Version, Guarded: ex.Guarded,
		Verdicts: ex.Verdicts, Problems: ex.Problems, Err: ex.Err,
	}
	if n := len(r.events); n > 0 {
		s.LastEventID = r.events[n-1].GetEventId()
	}
	// The calls' events, in order: call k is calls[k-FirstCall].
	var calls []*historypb.HistoryEvent
	var pauses []pauseEvent
	for _, e := range r.events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			calls = append(calls, e)
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED:
			a := e.GetWorkflowExecutionPausedEventAttributes()
			pauses = append(pauses, pauseEvent{e: e, calls: len(calls)})
			s.Paused, s.PauseRequestID, s.PauseIdentity = true, a.GetRequestId(), a.GetIdentity()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED:
			s.Paused, s.PauseRequestID, s.PauseIdentity = false, "", ""
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			s.Closed = true
		}
	}
	for _, v := range ex.Verdicts {
		if v.Halt == nil {
			continue
		}
		h := halt{Verdict: v}
		k := v.Call - ex.FirstCall // the tripping call's index
		if k >= 0 && k < len(calls) {
			h.EventID, h.Time = calls[k].GetEventId(), calls[k].GetEventTime().AsTime()
		}
		for _, p := range pauses {
			if p.calls > k {
				a := p.e.GetWorkflowExecutionPausedEventAttributes()
				h.Answered, h.PausedBy, h.PausedAt = true, a.GetRequestId(), p.e.GetEventTime().AsTime()
				h.CallsBefore = p.calls - k - 1
				break
			}
		}
		s.Halts = append(s.Halts, h)
	}
	r.snap = s
}

type pauseEvent struct {
	e     *historypb.HistoryEvent
	calls int // calls scheduled before it
}

// snapshot is what is judged so far.
func (r *reader) snapshot() snapshot { return r.snap }
