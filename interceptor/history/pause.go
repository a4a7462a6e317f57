package history

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Temporal's Workflow Pause (PauseWorkflowExecution, server v1.30 and
// later behind the dynamic config frontend.WorkflowPauseEnabled) stops an
// execution from outside: no workflow or activity task is dispatched
// until it is unpaused. Its history holds a WorkflowExecutionPaused event
// (identity, reason, request id) and a WorkflowExecutionUnpaused event.
// The reader takes them as the answers to the halts it judged in a run
// the interceptor does not guard, so that the analysis of a watched
// history afterwards reaches exactly the halts a watcher paused for:
//
//   - the Judge answers each of its halts as observe does, and the halt
//     waits for a pause;
//   - the first Paused event after halts waiting answers them: the one
//     whose PauseRequestID it carries (a watcher's pause), else the first
//     (a human's pause counts too); the others were raised by the calls
//     already scheduled while the pause was landing, and it supersedes
//     them;
//   - the Unpaused event that ends that pause resumes the halt it
//     answered (judge.Judge.Resumed): the loop starts over, as an
//     operator's resume starts it over;
//   - a pause with no halt waiting is someone else's (maintenance): it
//     answers nothing and its Unpaused changes nothing;
//   - a watcher's pause ahead of a halt (Reader.Ahead), asked while the
//     workflow task that schedules the tripping call runs, is written
//     after that task's commands (the server buffers it), so it comes
//     after the halt and answers it by the rules above; one whose halt
//     did not come has no halt waiting, and its undoing changes nothing;
//   - the run closing while paused (terminated, canceled, timed out) ends
//     the pause.

// PauseIdentity is the identity a watcher pauses with (the prefix of it:
// a watcher may add its own name after it).
const PauseIdentity = "loopguard-watch"

// WarningSignal is the signal a watcher sends a workflow that chose to
// hear its warnings (watch.Options.SignalWarnings), the interceptor's
// Warning as JSON.
const WarningSignal = "loop.warning"

// warningRequestPrefix starts the request id of a watcher's warning.
const warningRequestPrefix = "loopguard-warning:"

// WarningRequestID is the request id of the warning signal a watcher
// sends for the warning at call of run runID. The reader knows the
// watcher's own warnings by it: they are the guard's output, not the
// outside input a signal otherwise is (a barrier to the detectors), as
// the interceptor's notices are not; anyone else's loop.warning is.
func WarningRequestID(runID string, call int) string {
	return warningRequestPrefix + runID + ":" + strconv.Itoa(call)
}

// ownWarning reports whether a signal is a watcher's warning.
func ownWarning(name, requestID string) bool {
	return name == WarningSignal && strings.HasPrefix(requestID, warningRequestPrefix)
}

// pauseRequestPrefix starts the request id of a watcher's pause.
const pauseRequestPrefix = "loopguard-halt:"

// PauseRequestID is the request id of the pause that answers halt haltSeq
// of run runID (the run the watcher pauses) of workflowID. It is derived from the halt alone, so that
// a watcher restarted at any moment, or two watchers, ask for the same
// pause: the server takes a repeated pause with the request id of the
// pause in force as done. The run id alone names the run (a UUID): the
// workflow id is there for the callers' clarity.
func PauseRequestID(workflowID, runID string, haltSeq int) string {
	return pauseRequestPrefix + runID + ":" + strconv.Itoa(haltSeq)
}

// maxPauseReason bounds PauseReason (the server refuses a reason longer
// than its id length limit, 1,000 bytes by default).
const maxPauseReason = 254

// PauseReason is the reason a watcher's pause for halt ev gives, short
// enough for the pause's reason (under 255 bytes): the detector, the
// node, the loop count and where the full evidence is.
func PauseReason(ev protocol.HaltEvent) string {
	loop := ""
	if ev.MaxIterations > 0 {
		loop = fmt.Sprintf(", loop %d/%d", ev.Iteration, ev.MaxIterations)
	}
	const evidence = "; evidence: watcher log and /status, or worker analyze"
	node := ev.Node
	head := fmt.Sprintf("loopguard: %s on ", ev.Detector)
	if over := len(head) + len(node) + len(loop) + len(evidence) - maxPauseReason; over > 0 {
		node = truncate(node, len(node)-over)
	}
	return head + node + loop + evidence
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	const mark = "…"
	if len(s) <= n {
		return s
	}
	if n <= len(mark) {
		return ""
	}
	cut := n - len(mark)
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Pause is a Temporal Workflow Pause of a run as its history holds it.
type Pause struct {
	// Event is the WorkflowExecutionPaused event; Identity, Reason and
	// RequestID are its attributes.
	Event     int64  `json:"event"`
	Identity  string `json:"identity,omitempty"`
	Reason    string `json:"reason,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	// HaltSeq is the halt the pause answered (0: none was waiting, it is
	// someone else's pause), and Superseded the halts raised after that
	// halt, before the pause or while it held (the workflow task in
	// flight when it landed), which it answered too.
	HaltSeq    int   `json:"haltSeq,omitempty"`
	Superseded []int `json:"superseded,omitempty"`
	// Ended is the event that ended the pause: its Unpaused event
	// (Unpaused set, with its identity and reason), or the run's close
	// event. 0 while the pause holds.
	Ended         int64  `json:"ended,omitempty"`
	Unpaused      bool   `json:"unpaused,omitempty"`
	UnpausedBy    string `json:"unpausedBy,omitempty"`
	UnpauseReason string `json:"unpauseReason,omitempty"`
	// Called counts the run's guarded calls scheduled before the pause
	// ended (set with Ended): none is scheduled while it holds but those
	// of the workflow task in flight when it landed.
	Called int `json:"called,omitempty"`
	// Resumed is set when the unpause resumed the halt the pause answered
	// (judge.Judge.Resumed): the loop started over.
	Resumed bool `json:"resumed,omitempty"`
	// Time is the Paused event's time, and CalledBefore counts the run's
	// guarded calls scheduled before it.
	Time         time.Time `json:"time,omitzero"`
	CalledBefore int       `json:"calledBefore,omitempty"`
}

// RequestedHalt is the halt seq a PauseRequestID names (0: not one). The
// run id in it is not compared: a reset run's history names its base
// run, where the watcher names the run it pauses.
func RequestedHalt(requestID string) int {
	rest, ok := strings.CutPrefix(requestID, pauseRequestPrefix)
	if !ok {
		return 0
	}
	seq, err := strconv.Atoi(rest[strings.LastIndexByte(rest, ':')+1:])
	if err != nil || seq <= 0 {
		return 0
	}
	return seq
}

// ByWatcher reports whether a watcher paused (its request id is a
// PauseRequestID).
func (p *Pause) ByWatcher() bool { return strings.HasPrefix(p.RequestID, pauseRequestPrefix) }

// pausable reports whether the reader takes Workflow Pauses as the
// answers to the run's halts: the Judge answers its own halts (no
// recorded decisions to follow), and no interceptor guards the run (its
// own halts are its own).
func (r *runReader) pausable() bool {
	return !r.opts.AsRecorded && r.ex.Recorded.Version == 0 && r.ex.Guarded
}

// paused reads a WorkflowExecutionPaused event.
func (r *runReader) paused(e *historypb.HistoryEvent) {
	a := e.GetWorkflowExecutionPausedEventAttributes()
	p := Pause{Event: e.GetEventId(), Identity: a.GetIdentity(), Reason: a.GetReason(), RequestID: a.GetRequestId(),
		Time: e.GetEventTime().AsTime(), CalledBefore: r.ex.Called}
	if last := r.pause(); last != nil {
		// The server refuses a second pause while one holds: a history
		// that shows one ends the first there.
		last.Ended, last.Called = e.GetEventId(), r.ex.Called
		r.pauses.end()
	}
	if r.pausable() {
		waiting := unanswered(r.verdicts(), r.pauses.all())
		seq := RequestedHalt(p.RequestID)
		for _, ev := range waiting {
			if ev.Seq == seq {
				p.HaltSeq = seq
			}
		}
		if p.HaltSeq == 0 && len(waiting) > 0 {
			p.HaltSeq = waiting[0].Seq
		}
		for _, ev := range waiting {
			if ev.Seq != p.HaltSeq {
				p.Superseded = append(p.Superseded, ev.Seq)
			}
		}
	}
	r.pauses.begin(p)
}

// unpaused reads a WorkflowExecutionUnpaused event: the end of the pause
// in force, and the resume of the halt it answered.
func (r *runReader) unpaused(e *historypb.HistoryEvent) {
	p := r.pause()
	if p == nil {
		r.problem(e, "unpaused, but no pause holds")
		return
	}
	a := e.GetWorkflowExecutionUnpausedEventAttributes()
	p.Ended, p.Unpaused, p.UnpausedBy, p.UnpauseReason = e.GetEventId(), true, a.GetIdentity(), a.GetReason()
	p.Called = r.ex.Called
	defer r.pauses.end()
	if p.HaltSeq == 0 || !r.pausable() {
		return
	}
	for _, v := range r.verdicts() {
		if v.Halt != nil && v.Halt.Seq == p.HaltSeq {
			if r.judge.Resumed(*v.Halt, a.GetIdentity(), a.GetReason(), e.GetEventTime().AsTime()) {
				p.Resumed = true
				r.noteKept(protocol.Decision{Action: protocol.ActionResume, Reason: a.GetReason(), By: a.GetIdentity(), HaltSeq: p.HaltSeq})
			}
			return
		}
	}
}

// supersedeWhilePaused lets the pause in force, when it answered a halt,
// answer too the halts raised while it holds: a paused run dispatches no
// task, so their calls are those of the workflow task in flight when the
// pause landed (the server accepts its completion while paused), the
// lag, as the halts raised before the pause landed are. Its unpause then
// resumes the loop they are part of, and nothing is left waiting for a
// second pause. A pause that answered no halt (someone else's) answers
// none of them either.
func (r *runReader) supersedeWhilePaused() {
	p := r.pause()
	if p == nil || p.HaltSeq == 0 || !r.pausable() || r.judge == nil {
		return
	}
	for _, ev := range unanswered(r.verdicts(), r.pauses.all()) {
		p.Superseded = append(p.Superseded, ev.Seq)
	}
}

// noteKept notes an unpause's resume d on the halt it ends among the
// verdicts Options.Follow took from the Judge and has not handed over,
// as the Judge notes it on those it holds. A halt handed over (Halted)
// reads it from the pause (Pause.Resumed): kept once, not twice.
func (r *runReader) noteKept(d protocol.Decision) {
	for i := range r.kept {
		if h := r.kept[i].Halt; h != nil && h.Seq == d.HaltSeq {
			r.kept[i].Decision = &d
			return
		}
	}
}

// pause is the pause that holds the run (nil: none).
func (r *runReader) pause() *Pause { return r.pauses.cur }

// unanswered are the halts of verdicts that pause or fail and that none
// of pauses answered, in order.
func unanswered(verdicts []interceptor.Verdict, pauses Pauses) []protocol.HaltEvent {
	var out []protocol.HaltEvent
	for _, i := range unansweredAt(len(verdicts), func(i int) (int, bool) {
		v := &verdicts[i]
		return v.Halt.Seq, v.OnHalt == protocol.OnHaltObserve
	}, func(i int) bool { return verdicts[i].Halt != nil }, pauses) {
		out = append(out, *verdicts[i].Halt)
	}
	return out
}

// unansweredAt are the indices, of n halts or verdicts, of the halts
// (isHalt) that pause or fail (at: their seq and whether the options
// observe them) and that none of pauses answered, in order.
func unansweredAt(n int, at func(i int) (seq int, observed bool), isHalt func(i int) bool, pauses Pauses) []int {
	answered := pauses.answered()
	var out []int
	for i := range n {
		if !isHalt(i) {
			continue
		}
		if seq, observed := at(i); !observed && !answered[seq] {
			out = append(out, i)
		}
	}
	return out
}
