package history

import (
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Execution is the analysis of one run of a workflow execution.
type Execution struct {
	// File is the history's file, when it came from one.
	File         string `json:"file,omitempty"`
	WorkflowType string `json:"workflowType"`
	WorkflowID   string `json:"workflowId"`
	RunID        string `json:"runId,omitempty"`
	// ContinuedFrom is the run this one continued as new from; when that
	// run was analysed in the same batch, the guard's state carries over.
	ContinuedFrom string `json:"continuedFrom,omitempty"`
	// Guarded says whether the options guard the execution; NotGuarded
	// says why not.
	Guarded    bool   `json:"guarded"`
	NotGuarded string `json:"notGuarded,omitempty"`
	// Calls are the nodes of the run's guarded calls, in order; FirstCall
	// is the number of the first of them over the chain of runs (1 for a
	// first run).
	Calls     []string `json:"calls"`
	FirstCall int      `json:"firstCall"`
	// Called counts the run's guarded calls (len(Calls) unless
	// Options.Follow left Calls empty).
	Called int `json:"-"`
	// Copied counts the calls a reset copied into the run from its base
	// run: those before the run's ResetWorkflow task failure (0: the run
	// is no reset run). Their verdicts are the base run's too.
	Copied int `json:"copied,omitempty"`
	// Verdicts are the warnings and halts the guard raises, in order
	// (Options.Follow: those judged since the Execution before, the
	// run's halts all in Halted). VerdictsSeen counts the verdicts of
	// the run so far and WarningsSeen the warnings among them, including
	// those Follow dropped: the newest VerdictsSeen-n verdicts are the
	// last of Verdicts, for a follower that acted on n of them.
	Verdicts []interceptor.Verdict `json:"verdicts,omitempty"`
	// Halted are, under Options.Follow, the run's halts so far (those of
	// Verdicts included), kept compact: what a follower may hold as long
	// as it follows the run. Halts, Unanswered and Pending read it.
	Halted       Halted `json:"-"`
	VerdictsSeen int    `json:"-"`
	WarningsSeen int    `json:"-"`
	// Saved counts the calls a halt that pauses or fails would have
	// saved: the first such halt's call and every call after it.
	Saved int `json:"saved,omitempty"`
	// Recorded is what the history holds of a guard that ran.
	Recorded Recorded `json:"recorded"`
	// Problems are what could not be read, each naming its event; the
	// rest of the history was judged.
	Problems []string `json:"problems,omitempty"`
	// Err is set when the history could not be judged at all.
	Err error `json:"-"`
	// Closed is set once the run's close event is judged (completed,
	// failed, timed out, canceled, terminated or continued as new).
	Closed bool `json:"closed,omitempty"`
	// LastEvent is the id of the last event judged: a Reader judges an
	// event once the events it needs after it are in (see Reader).
	LastEvent int64 `json:"lastEvent,omitempty"`
	// Pausable says that the run's halts wait for a Temporal Workflow
	// Pause to answer them (pause.go): the options guard the run, no
	// interceptor does (Recorded.Version is 0: a run the interceptor
	// guards is left to it), and the analysis does not follow recorded
	// decisions. Pauses are the run's Workflow Pauses, in order, with
	// the halts each answered.
	Pausable bool   `json:"pausable,omitempty"`
	Pauses   Pauses `json:"pauses,omitzero"`
}

// Paused is the Workflow Pause that holds the run now (nil: none).
func (e *Execution) Paused() *Pause { return e.Pauses.now }

// Unanswered are the halts that pause or fail and that no Workflow Pause
// answered yet, in order (none when the run is not Pausable). A watcher
// pauses for the last of them (Pending).
func (e *Execution) Unanswered() []protocol.HaltEvent {
	if !e.Pausable {
		return nil
	}
	if e.Halted.Len() == 0 {
		return unanswered(e.Verdicts, e.Pauses)
	}
	var out []protocol.HaltEvent
	for _, i := range e.unansweredHalted() {
		out = append(out, *e.Halted.At(i).Halt)
	}
	return out
}

// unansweredHalted are the indices in Halted (Options.Follow) of the
// halts Unanswered lists.
func (e *Execution) unansweredHalted() []int {
	h := e.Halted
	return unansweredAt(h.Len(), func(i int) (int, bool) { return h.Seq(i), h.observed(i) },
		func(int) bool { return true }, e.Pauses)
}

// Pending is the newest unanswered halt, the one a watcher pauses the run
// for (nil: none, or the run is closed or already paused).
func (e *Execution) Pending() *protocol.HaltEvent {
	if !e.Pausable || e.Closed || e.Paused() != nil {
		return nil
	}
	if e.Halted.Len() > 0 {
		// Under Options.Follow: only the newest is expanded.
		un := e.unansweredHalted()
		if len(un) == 0 {
			return nil
		}
		return e.Halted.At(un[len(un)-1]).Halt
	}
	un := e.Unanswered()
	if len(un) == 0 {
		return nil
	}
	return &un[len(un)-1]
}

// Recorded is what a history recorded with the guard says the guard did.
type Recorded struct {
	// Guarded is true when the guard's version marker is in the history.
	Guarded bool `json:"guarded"`
	Version int  `json:"version,omitempty"`
	// Halts are the halts the guard raised (its loop.halted signals), and
	// Answers the decisions sent to it, in order.
	Halts   []protocol.HaltEvent `json:"halts,omitempty"`
	Answers []RecordedAnswer     `json:"answers,omitempty"`
}

// RecordedAnswer is a human's (or a program's) resume, escalate or halt sent to a
// guarded workflow, as the history holds it.
type RecordedAnswer struct {
	Event   int64                  `json:"event"`
	Name    string                 `json:"name"`
	Update  bool                   `json:"update,omitempty"`
	Request protocol.ResumeRequest `json:"request"`
	// Signed is the answer a SignedAnswer carried (Options.OperatorKeys);
	// Request then holds its reason, by, guidance and extend. Whether the
	// guard took it is the Judge's call, not this record's.
	Signed *protocol.Answer `json:"signed,omitempty"`
	Error  string           `json:"error,omitempty"`
	// Refused is why the guard refused the answer, as the Judge found it
	// (the reason loop.status lists; "" when taken, or not a signal).
	Refused string `json:"refused,omitempty"`
	// HaltSeq is the halt a resume or escalate answered: the last one
	// raised before it that pauses and was not answered yet (0: none).
	HaltSeq int `json:"haltSeq,omitempty"`
	// Handler is set for a decision of the workflow's halt handler. The
	// history holds no event of its own for it: it is read where the halt
	// ended with no other decision (Name is the action; Request.Guidance
	// the guidance the calls after it carried; its reason is not in the
	// history). Read with AsRecorded only.
	Handler bool `json:"handler,omitempty"`
	// Guard is set for a decision the guard took itself, which the
	// analysis followed (AsRecorded only): the pause timeout's, the fail
	// policy's, a cancellation's (Request.Reason says which). No event
	// carries it: Event is 0.
	Guard bool `json:"guard,omitempty"`
	// payload is the signal's, to find the record of a refusal by.
	payload *commonpb.Payload
}

// Told says in a few words where the guard really halted and how each
// halt was answered: "2 halts: #1 stalled at Code, resume; #2 stalled at
// Verify, escalate" (the first three).
func (r Recorded) Told() string {
	if len(r.Halts) == 0 {
		return ""
	}
	const shown = 3
	parts := make([]string, min(len(r.Halts), shown))
	for i, h := range r.Halts[:len(parts)] {
		how := "no answer in the history (paused, pause timeout, halt handler or fail)"
		if h.Observed {
			how = "observed"
		}
		for _, a := range r.Answers {
			if a.HaltSeq == h.Seq {
				how = a.Name
				switch {
				case a.Handler:
					how += " by the halt handler"
				case a.Guard:
					how += fmt.Sprintf(" by the guard (%s)", a.Request.Reason)
				}
			}
		}
		parts[i] = fmt.Sprintf("#%d %s at %s, %s", h.Seq, h.HaltReason, h.Node, how)
	}
	if len(r.Halts) > shown {
		parts = append(parts, fmt.Sprintf("%d more", len(r.Halts)-shown))
	}
	return fmt.Sprintf("%d halts: %s", len(r.Halts), strings.Join(parts, "; "))
}

// Halts returns the execution's would-be halts.
func (e *Execution) Halts() []protocol.HaltEvent {
	var out []protocol.HaltEvent
	if e.Halted.Len() > 0 { // Options.Follow: Verdicts holds the newest only
		for i := range e.Halted.Len() {
			out = append(out, *e.Halted.At(i).Halt)
		}
		return out
	}
	for _, v := range e.Verdicts {
		if v.Halt != nil {
			out = append(out, *v.Halt)
		}
	}
	return out
}

// Warnings returns the execution's would-be warnings.
func (e *Execution) Warnings() []protocol.Warning {
	var out []protocol.Warning
	for _, v := range e.Verdicts {
		if v.Warning != nil {
			out = append(out, *v.Warning)
		}
	}
	return out
}

// guardAnswers notes the decisions the guard itself took on the halts
// recorded (the pause timeout, the fail policy, a cancellation while
// paused), which the analysis followed: no signal or update carries them.
func (r *Recorded) guardAnswers(verdicts []interceptor.Verdict) {
	for _, v := range verdicts {
		d := v.Decision
		if v.Halt == nil || d == nil || d.By != guardBy {
			continue
		}
		for _, h := range r.Halts {
			if h.Seq == d.HaltSeq {
				r.Answers = append(r.Answers, RecordedAnswer{Name: string(d.Action), Guard: true,
					Request: protocol.ResumeRequest{Reason: d.Reason, By: d.By}, HaltSeq: d.HaltSeq})
				break
			}
		}
	}
}

// guardBy is the Decision.By of the guard's own decisions.
const guardBy = "loopguard"

// unanswered is the last halt that pauses and has no answer yet, 0 for
// none.
func (r *Recorded) unanswered() int {
	for i := len(r.Halts) - 1; i >= 0; i-- {
		h := r.Halts[i]
		if h.Observed {
			continue
		}
		for _, a := range r.Answers {
			if a.HaltSeq == h.Seq {
				return 0
			}
		}
		return h.Seq
	}
	return 0
}
