package watch

import (
	"math"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/blocks"
)

// The watcher's one seam with the reading of histories: a
// history.Reader fed a growing history, and the snapshot the watcher
// acts on. The pause semantics (which pause answers which halt, an
// unpause resumes) are the reader's, so that the analysis of a watched
// history afterwards reaches exactly the watcher's halts.

// PauseIdentity prefixes the identity the watcher pauses with.
const PauseIdentity = history.PauseIdentity

// PauseRequestID is the request id of the pause that answers halt seq of
// a run: derived from the halt alone, so that a restarted watcher, or a
// second one, asks for the same pause, and the server takes a repeated
// request while paused as done (history.PauseRequestID).
func PauseRequestID(workflowID, runID string, haltSeq int) string {
	return history.PauseRequestID(workflowID, runID, haltSeq)
}

// resetterIdentity is the identity of the termination with which the
// server closes a run it resets (server v1.32.1,
// consts.IdentityResetter).
const resetterIdentity = "history-resetter"

// PauseReason is a pause's reason: the detector, the node, the loop's
// count and where the full evidence is, in less than 255 bytes
// (history.PauseReason).
func PauseReason(ev protocol.HaltEvent) string { return history.PauseReason(ev) }

// halt is one halt of a snapshot and how the history answered it, as
// snapshot.halts expands it.
type halt struct {
	// Verdict is the halt without its evidence, message and warnings,
	// but for the halts judged since the snapshot before (in Verdicts).
	Verdict interceptor.Verdict
	// Time is that of the event of the call that tripped.
	Time time.Time
	// Answered is set once a Workflow Pause answered the halt (its own,
	// or one that superseded it); PausedBy is that pause's request id,
	// PausedAt its time, and CallsBefore the calls scheduled between
	// the trip and the pause (the lag).
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
	Guarded bool
	// Verdicts are the verdicts judged since the snapshot before, in
	// full (the reader follows the run, history.Options.Follow: the run's
	// halts are all in Halted, without their evidence); VerdictsSeen
	// and WarningsSeen count every verdict and warning of the run so far.
	Verdicts     []interceptor.Verdict
	VerdictsSeen int
	WarningsSeen int
	// Signalled is the newest call whose warning a watcher signalled
	// (its loop.warning is in the history): the process that sent it
	// counted it.
	Signalled int
	// PausedThrough is the newest call scheduled before the last
	// watcher's pause of the run that ended (0: none): the watchers
	// following the run while the pause held read it (warned.go).
	PausedThrough int
	// ResetAway is set when a reset closed the run: its loop goes on in
	// the reset run, and no halt of it escaped.
	ResetAway bool
	// CopiedThrough is the newest call a reset copied from the run's base
	// run (0: none): its verdicts were counted when the base run was read.
	CopiedThrough int
	// Halted are the run's halts, kept compact (history.Halted), and
	// trips the times of their tripping calls' events (Unix ns, 0:
	// unknown), in the same order: what a snapshot holds a halt, views
	// that the reader only appends to. The halts' pauses are Pauses.
	Halted    history.Halted
	trips     blocks.List[int64]
	Pauses    history.Pauses
	FirstCall int
	// Pending is the seq of the newest halt no pause answered, when the
	// run is neither closed nor paused (0: none).
	Pending int
	// Ahead is the halt the run's next guarded call will raise, foreseen
	// while the workflow task that reads the results deciding it is in
	// flight (the last event read is its start), when no halt waits and
	// no pause holds (ahead.go; nil: none).
	Ahead *protocol.HaltEvent
	// PausesJudged is set when every pause read is judged.
	PausesJudged bool
	// Paused is set while the run is paused; PauseRequestID and
	// PauseIdentity are the pause's, and PauseFailedTask is set when it
	// failed a workflow task waiting to start (pausepoint.go mends it).
	PauseFailedTask bool
	Paused          bool
	PauseRequestID  string
	PauseIdentity   string
	Closed          bool
	// LastEventID is the last event read (the cursor).
	LastEventID int64
	Problems    []string
	Err         error
}

// halts are the run's halts, expanded, with how the history answered
// each (built for the one who asks: a snapshot keeps them compact).
func (s snapshot) halts() []halt {
	out := make([]halt, s.Halted.Len())
	for i := range out {
		out[i] = s.halt(i)
	}
	return out
}

// halt is halt i of Halted, expanded; the verdicts of Verdicts keep
// their evidence.
func (s snapshot) halt(i int) halt {
	h := halt{Verdict: s.Halted.At(i)}
	for _, v := range s.Verdicts {
		if v.Halt != nil && v.Halt.Seq == h.Verdict.Halt.Seq {
			h.Verdict = v
		}
	}
	if i < s.trips.Len() && *s.trips.At(i) != 0 {
		h.Time = time.Unix(0, *s.trips.At(i)).UTC()
	}
	if p, ok := s.Pauses.Answering(h.Verdict.Halt.Seq); ok {
		k := h.Verdict.Call - s.FirstCall // the tripping call's index in the run
		h.Answered, h.PausedBy, h.PausedAt, h.CallsBefore = true, p.RequestID, p.Time, max(p.CalledBefore-k-1, 0)
	}
	return h
}

// haltIndex is the index in Halted of halt seq (-1: none).
func (s snapshot) haltIndex(seq int) int {
	for i := s.Halted.Len() - 1; i >= 0; i-- {
		if s.Halted.Seq(i) == seq {
			return i
		}
	}
	return -1
}

// pending is the halt the watcher answers, or nil.
func (s snapshot) pending() *halt {
	if i := s.haltIndex(s.Pending); s.Pending != 0 && i >= 0 {
		h := s.halt(i)
		return &h
	}
	return nil
}

// recentCalls is how many of the last calls' event times a reader keeps:
// a halt is judged at most a workflow task after its call, and a task
// schedules far fewer calls.
const recentCalls = 256

// reader reads one run's growing history. Besides the history.Reader it
// keeps, for the lag, the times of the last recentCalls calls' events,
// a word a halt (its trip's time) and a few a pause: nothing that grows
// with the calls.
type reader struct {
	r      *history.Reader
	calls  int                // the calls read
	recent [recentCalls]int64 // call i's event time (Unix ns, a third of a time.Time) at i%recentCalls
	trips  blocks.List[int64] // the tripping call's time (Unix ns) of the run's halt i (snapshot.trips)
	// asked are the request ids of the pauses read and in force when
	// read (inForce the last's), and lastPause the id of the last Paused
	// or Unpaused event read.
	asked   map[string]bool
	inForce string
	// unstarted is the last task a pause failed before it started, and
	// failedTask is set when the last pause read failed one.
	unstarted  int64
	failedTask bool
	lastPause  int64
	signalled  int  // the newest call with a watcher's loop.warning read
	resetAway  bool // a reset closed the run
	// resetAt is the run's ResetWorkflow task failure (0: none read):
	// the events before it are copies of the base run's.
	resetAt int64
	last    int64
	// lastType is the type of the last event read.
	lastType enumspb.EventType
	handed   int // the run's verdicts handed over so far
	snap     snapshot
	key      snapKey
	keyed    bool
}

// newReader reads a run under guard, decoding payloads with dc (nil: the
// SDK's default converter).
func newReader(guard interceptor.Options, dc converter.DataConverter) (*reader, error) {
	r, err := history.NewReader(history.Options{Guard: guard, Follow: true, DataConverter: dc})
	if err != nil {
		return nil, err
	}
	return &reader{r: r, asked: map[string]bool{}}, nil
}

// add appends events, in history order, and judges them.
func (r *reader) add(events ...*historypb.HistoryEvent) {
	for _, e := range events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			r.calls = 0 // a run of a chain: calls are counted in the run
			r.resetAt = 0
			// Event ids start again: a pause of the run before is not
			// this run's to wait for.
			r.lastPause, r.inForce, r.unstarted, r.failedTask = 0, "", 0, false
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			switch e.GetWorkflowTaskFailedEventAttributes().GetCause() {
			case enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW:
				r.resetAt = e.GetEventId()
			case enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED:
				r.unstarted = e.GetEventId()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			r.recent[r.calls%recentCalls] = e.GetEventTime().AsTime().UnixNano()
			r.calls++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED:
			r.inForce = e.GetWorkflowExecutionPausedEventAttributes().GetRequestId()
			r.asked[r.inForce] = true
			// The server fails a task waiting to start in the pause's
			// own transaction, written right before it.
			r.failedTask = r.unstarted == e.GetEventId()-1
			r.lastPause = e.GetEventId()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED:
			// A halt is answered by its pause or it is not: once the
			// pause ended, the reading says which (a pause ahead undone
			// answered nothing, and the halt it foresaw, when it comes,
			// waits for a pause of its own).
			delete(r.asked, r.inForce)
			r.lastPause = e.GetEventId()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
			// The server's resetter terminates the run it resets (a
			// mend's, an operator's reset): the loop goes on in the reset
			// run.
			r.resetAway = e.GetWorkflowExecutionTerminatedEventAttributes().GetIdentity() == resetterIdentity
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			a := e.GetWorkflowExecutionSignaledEventAttributes()
			if call, ok := signalledWarning(a.GetSignalName(), a.GetRequestId()); ok {
				r.signalled = max(r.signalled, call)
			}
		}
		r.last = e.GetEventId()
		r.lastType = e.GetEventType()
	}
	r.judged(r.r.Add(events...))
}

// rest judges the events held as the history's end leaves them: what the
// analysis of the history as it stands says (a paused run's history is at
// rest until its unpause, and the reader may hold its last workflow
// task, the pause after it too, waiting for the next task). The reader
// takes no more events after it.
func (r *reader) rest() snapshot {
	r.r.Close()
	r.judged(nil)
	return r.snap
}

// judged makes the snapshot of what the reader has judged; err is the
// reading's.
func (r *reader) judged(err error) {
	ex := r.r.Execution()
	s := snapshot{
		WorkflowType: ex.WorkflowType, WorkflowID: ex.WorkflowID, RunID: ex.RunID,
		GuardVersion: ex.Recorded.Version, Guarded: ex.Guarded,
		Verdicts: r.fresh(ex), VerdictsSeen: ex.VerdictsSeen, WarningsSeen: ex.WarningsSeen,
		Signalled: r.signalled, Problems: ex.Problems, Err: err,
		Closed: ex.Closed, ResetAway: r.resetAway, LastEventID: r.last,
	}
	// The newest of the watcher's pauses that ended by an unpause: read
	// from the newest, as a page asks it.
	for i := ex.Pauses.Len() - 1; i >= 0; i-- {
		if p := ex.Pauses.At(i); p.Unpaused && p.ByWatcher() && p.Called > 0 {
			s.PausedThrough = ex.FirstCall + p.Called - 1
			break
		}
	}
	switch {
	case r.resetAt > ex.LastEvent:
		// The reader has not judged the reset's failure yet: every
		// verdict so far is a copy.
		s.CopiedThrough = math.MaxInt
	case ex.Copied > 0:
		s.CopiedThrough = ex.FirstCall + ex.Copied - 1
	}
	if p := ex.Paused(); p != nil {
		s.Paused, s.PauseRequestID, s.PauseIdentity = true, p.RequestID, p.Identity
		s.PauseFailedTask = r.failedTask
	}
	if ex.RunID != r.snap.RunID || ex.Halted.Len() < r.trips.Len() {
		r.trips = blocks.List[int64]{} // a run of a chain: its halts are its own
	}
	for i := r.trips.Len(); i < ex.Halted.Len(); i++ {
		var t int64
		if k := ex.Halted.Call(i) - ex.FirstCall; k >= 0 && k < r.calls && r.calls-k <= recentCalls {
			t = r.recent[k%recentCalls]
		}
		r.trips.Add(t)
	}
	s.Halted, s.trips, s.FirstCall = ex.Halted, r.trips, ex.FirstCall
	// What follows changes only with new verdicts, pauses or the run's
	// state: a page with none costs nothing more.
	key := snapKey{ex.VerdictsSeen, ex.Pauses.Len(), ex.Closed, s.Paused, ex.LastEvent >= r.lastPause}
	s.PausesJudged = ex.LastEvent >= r.lastPause
	if key == r.key && r.keyed {
		s.Pauses, s.Pending = r.snap.Pauses, r.snap.Pending
		s.Ahead = r.ahead(ex, &s)
		r.snap = s
		return
	}
	r.key, r.keyed = key, true
	// The reader judges an event once the rest of its workflow task is
	// in, so a pause read may not be judged yet: the halt it answered
	// would look pending. Nothing is pending until every pause read is
	// judged, and a halt whose pause the history already holds never is.
	if p := ex.Pending(); p != nil && ex.LastEvent >= r.lastPause && !r.asked[PauseRequestID(ex.WorkflowID, ex.RunID, p.Seq)] {
		s.Pending = p.Seq
	}
	s.Pauses = ex.Pauses
	s.Ahead = r.ahead(ex, &s)
	r.snap = s
}

// fresh are the verdicts the reader handed over in full since the
// snapshot before (the last of ex.Verdicts).
func (r *reader) fresh(ex history.Execution) []interceptor.Verdict {
	n := ex.VerdictsSeen - r.handed
	if ex.RunID != r.snap.RunID {
		n = ex.VerdictsSeen // a run of a chain: its verdicts are counted from 0
	}
	r.handed = ex.VerdictsSeen
	n = min(max(n, 0), len(ex.Verdicts))
	return ex.Verdicts[len(ex.Verdicts)-n:]
}

// snapKey is what the halts and the pending halt of a snapshot depend on.
type snapKey struct {
	verdicts, pauses     int
	closed, paused, seen bool
}

// snapshot is what is judged so far.
func (r *reader) snapshot() snapshot { return r.snap }
