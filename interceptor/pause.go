package interceptor

import (
	"fmt"
	"slices"
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// phase is where an execution stands with respect to halts.
type phase uint8

const (
	// phaseRunning: no halt in force; calls go ahead.
	phaseRunning phase = iota
	// phaseHalting: a call tripped and the guard is raising loop.halted.
	// Calls from other branches wait: the trip is the whole workflow's.
	phaseHalting
	// phasePaused: the halt waits for a human decision.
	phasePaused
	// phaseEscalated: the last halt was escalated; calls go ahead again.
	phaseEscalated
)

func (p phase) String() string {
	return [...]string{"running", "halting", "paused", "escalated"}[p]
}

// pause is the guard's pause and decision state: one halt at a time, the
// decision that answers it and what the last one was. Every change goes
// through set, so the fields cannot disagree; status, input checks and the
// guarded calls only read it.
type pause struct {
	phase phase
	// halt is the halt in force (halting, paused) or the last one.
	halt *protocol.HaltEvent
	// policy is what the halt in force does: pause, observe or fail.
	policy protocol.OnHalt
	// since is the workflow time the halt in force began.
	since time.Time
	// decision answers the halt in force once a human (or the pause
	// timeout, or cancellation) has decided; extend goes with a resume.
	decision *protocol.Decision
	extend   detect.Extension
	// last is the last decision carried out, and resolved the Seq of the
	// last halt that ended: branches that waited on it read its outcome.
	last     *protocol.Decision
	resolved int
	// handling is how long the halt handler ran before the pause: it
	// counts towards PauseTimeout. deciding is set while it runs.
	handling time.Duration
	deciding bool
	// rung is the warning rung's state (Options.Warnings), below the halt.
	// changes counts the changes of warned, so that the memo can tell it
	// is behind.
	rung
	changes int
	// counted is the sequence number of the last step counted against the
	// warning in force: a warning's window counts the loop's steps, so a
	// call that joins a step already counted (the other calls of a
	// fan-out) does not count again.
	counted int
}

// rung is the warning rung's state, which continue-as-new carries (its
// JSON is the carried state's). warned are the warnings issued to loops
// that have neither heeded them nor halted since, oldest first, at most
// maxWarned; the last one is in force while left (steps of its loop's
// nodes) is positive. issued counts every warning of the run. tally counts each loop's warnings in
// warned and beyond it: the list keeps 8 for evidence, and a loop counted
// from it could never reach a ninth warning.
type rung struct {
	Warned      []protocol.Warning `json:"warned,omitempty"`
	WarningLeft int                `json:"warningLeft,omitempty"`
	Warnings    int                `json:"warnings,omitempty"`
	Tally       []warnTally        `json:"warnTally,omitempty"`
}

// warnTally is the number of unanswered warnings of one loop.
type warnTally struct {
	Key string `json:"key"`
	N   int    `json:"n"`
}

// maxTally bounds the loops whose warnings are counted. A loop whose tally
// is dropped (the oldest, once that many others were warned since) starts
// its count over: liveness is promised to a loop that keeps repeating,
// not to one of 64 others warned in turn.
const maxTally = 64

// newPause is the pause state of a new execution.
func newPause() pause { return pause{} }

// maxWarned bounds the warnings kept for the evidence of a halt.
const maxWarned = 8

// set is the one transition function. It moves to phase to, keeping the
// invariants: a halt is in force exactly while halting or paused, and a
// decision only exists for the halt in force.
func (p *pause) set(to phase, ev *protocol.HaltEvent, policy protocol.OnHalt, now time.Time, d *protocol.Decision) {
	from := p.phase
	switch to {
	case phaseHalting:
		// Callers wait for the end of a halt in force before they can trip
		// (admit), so a new halt always starts from running or escalated.
		p.halt, p.policy, p.since = ev, policy, now
		p.decision, p.extend = nil, detect.Extension{}
		// The halt answers the warnings its loop did not heed.
		ev.Warnings = p.answer(warningKey(ev.Loop, ev.CycleID, ev.Node))
	case phaseRunning, phaseEscalated:
		if from == phaseHalting || from == phasePaused {
			// The halt in force ends with decision d (nil: observed).
			if d != nil {
				p.last = d
			}
			p.resolved = p.halt.Seq
			p.decision, p.extend = nil, detect.Extension{}
		}
	}
	p.phase = to
}

// inForce reports whether a halt is in force: calls wait for its end.
func (p *pause) inForce() bool {
	return p.phase == phaseHalting || p.phase == phasePaused
}

// showsHalted reports whether status shows the workflow halted: a halt in
// force that stops the workflow (not one that is only observed).
func (p *pause) showsHalted() bool {
	return p.inForce() && p.policy != protocol.OnHaltObserve
}

// awaiting reports whether a human decision can be taken now.
func (p *pause) awaiting() bool {
	switch {
	case p.decision != nil || p.policy != protocol.OnHaltPause:
		return false
	case p.phase == phasePaused:
		return true
	}
	// A decision may answer a halt while loop.halted is still being raised.
	return p.phase == phaseHalting
}

// checkDecision says why a resume or escalate named name cannot be taken
// now, or returns nil when it can.
func (p *pause) checkDecision(name string) error {
	switch {
	case p.awaiting():
		return nil
	case p.inForce() && p.decision != nil:
		return &InputError{Name: name, Reason: fmt.Sprintf("halt %d was already answered: %s by %q", p.halt.Seq, p.decision.Action, p.decision.By)}
	case p.showsHalted():
		return &InputError{Name: name, Reason: fmt.Sprintf("halt %d is being raised", p.halt.Seq)}
	case p.phase == phaseEscalated:
		return &InputError{Name: name, Reason: "nothing is halted: the last halt was already escalated"}
	}
	return &InputError{Name: name, Reason: "nothing is halted"}
}

// decide records the decision d (with a resume's extension) for the halt
// in force. The caller has checked awaiting.
func (p *pause) decide(d protocol.Decision, ext detect.Extension) protocol.Decision {
	d.HaltSeq = p.halt.Seq
	p.decision, p.extend = &d, ext
	return d
}

// warning returns the warning in force, or nil.
func (p *pause) warning() *protocol.Warning {
	if p.WarningLeft <= 0 || len(p.Warned) == 0 {
		return nil
	}
	return &p.Warned[len(p.Warned)-1]
}

// warnings counts the warnings the loop of key got and has not answered.
func (p *pause) warnings(key string) int {
	if i := p.tallyOf(key); i >= 0 {
		return p.Tally[i].N
	}
	return 0
}

func (p *pause) tallyOf(key string) int {
	for i := range p.Tally {
		if p.Tally[i].Key == key {
			return i
		}
	}
	return -1
}

// warn puts w in force for left calls (steps) of its loop's nodes.
func (p *pause) warn(w protocol.Warning, left int) {
	p.Warned = append(p.Warned, w)
	if len(p.Warned) > maxWarned {
		p.Warned = p.Warned[len(p.Warned)-maxWarned:]
	}
	if i := p.tallyOf(keyOf(w)); i >= 0 {
		p.Tally[i].N++
	} else {
		if len(p.Tally) == maxTally {
			p.Tally = append(p.Tally[:0], p.Tally[1:]...)
		}
		p.Tally = append(p.Tally, warnTally{Key: keyOf(w), N: 1})
	}
	p.WarningLeft = left
	p.Warnings++
	p.changes++
}

// heed counts a call of node, of step step (its detector step's sequence
// number, 0 for a call the detectors do not count), against the warning
// in force, and returns the warning when that call ends its window: the
// loop heeded it, and its count starts over. A window ends only once news says the loop brought something new since
// the warning (detect.State.NewsSinceBarrier); until then the warning
// stays in force, so that a loop whose round is longer than the window
// cannot outlast it unchanged.
func (p *pause) heed(node string, step int, news func(nodes []string) bool) *protocol.Warning {
	if !p.counts(node, step) {
		return nil
	}
	p.counted = step
	w := p.warning() // still the last of Warned once the window ends
	if p.WarningLeft--; p.WarningLeft > 0 {
		return nil
	}
	if !news(w.Nodes) {
		p.WarningLeft = 1 // nothing new yet: still in force
		return nil
	}
	heeded := *w // a copy: answer removes it from Warned
	p.answer(keyOf(heeded))
	return &heeded
}

// counts reports whether a call of node, of step step, counts against
// the warning in force. It only reads.
func (p *pause) counts(node string, step int) bool {
	w := p.warning()
	if w == nil || !slices.Contains(w.Nodes, node) {
		return false
	}
	return step > p.counted
}

// heeds reports whether a call of node, of step step, would end the
// warning's window (heed): the call itself carries no warning then.
func (p *pause) heeds(node string, step int, news func(nodes []string) bool) bool {
	return p.counts(node, step) && p.WarningLeft == 1 && news(p.warning().Nodes)
}

// answer removes and returns the warnings of the loop of key; the warning
// in force goes with them when it is that loop's.
func (p *pause) answer(key string) []protocol.Warning {
	if w := p.warning(); w != nil && keyOf(*w) == key {
		p.WarningLeft = 0
	}
	var out []protocol.Warning
	kept := p.Warned[:0]
	for _, w := range p.Warned {
		if keyOf(w) == key {
			out = append(out, w)
		} else {
			kept = append(kept, w)
		}
	}
	p.Warned = kept
	if i := p.tallyOf(key); i >= 0 {
		p.Tally = append(p.Tally[:i], p.Tally[i+1:]...)
	}
	if len(out) > 0 {
		p.changes++
	}
	return out
}
