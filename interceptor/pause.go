package interceptor

import (
	"fmt"
	"slices"
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
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
	halt *HaltEvent
	// policy is what the halt in force does: pause, observe or fail.
	policy OnHalt
	// since is the workflow time the halt in force began.
	since time.Time
	// decision answers the halt in force once a human (or the pause
	// timeout, or cancellation) has decided; extend goes with a resume.
	decision *Decision
	extend   detect.Extension
	// last is the last decision carried out, and resolved the Seq of the
	// last halt that ended: branches that waited on it read its outcome.
	last     *Decision
	resolved int
	// handling is how long the halt handler ran before the pause (version
	// 8): it counts towards PauseTimeout. deciding is set while it runs.
	handling time.Duration
	deciding bool
	// early lets a decision answer a halt while loop.halted is still being
	// raised (guard version 4); older versions took decisions only once
	// paused, and replay must decide as they did.
	early bool

	// The warning rung (guard version 7, Options.Warnings), below the
	// halt: warned are the warnings issued to loops that have neither
	// heeded them nor halted since, oldest first; the last one is in
	// force while left (calls of its loop's nodes) is positive. issued
	// counts every warning of the run; changes counts the changes of
	// warned, so that the memo can tell it is behind (version 8).
	rung    bool
	warned  []Warning
	left    int
	issued  int
	changes int
}

// maxWarned bounds the warnings kept for the evidence of a halt.
const maxWarned = 8

// set is the one transition function. It moves to phase to, keeping the
// invariants: a halt is in force exactly while halting or paused, and a
// decision only exists for the halt in force.
func (p *pause) set(to phase, ev *HaltEvent, policy OnHalt, now time.Time, d *Decision) {
	from := p.phase
	switch to {
	case phaseHalting:
		// Callers wait for the end of a halt in force before they can trip
		// (admit), so a new halt always starts from running or escalated.
		p.halt, p.policy, p.since = ev, policy, now
		p.decision, p.extend = nil, detect.Extension{}
		if p.rung {
			// The halt answers the warnings its loop did not heed.
			ev.Warnings = p.answer(warningKey(ev.Loop, ev.CycleID, ev.Node))
		}
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
	return p.inForce() && p.policy != OnHaltObserve
}

// awaiting reports whether a human decision can be taken now.
func (p *pause) awaiting() bool {
	switch {
	case p.decision != nil || p.policy != OnHaltPause:
		return false
	case p.phase == phasePaused:
		return true
	}
	return p.early && p.phase == phaseHalting
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
func (p *pause) decide(d Decision, ext detect.Extension) Decision {
	d.HaltSeq = p.halt.Seq
	p.decision, p.extend = &d, ext
	return d
}

// warning returns the warning in force, or nil.
func (p *pause) warning() *Warning {
	if p.left <= 0 || len(p.warned) == 0 {
		return nil
	}
	return &p.warned[len(p.warned)-1]
}

// warnings counts the warnings the loop of key got and has not answered.
func (p *pause) warnings(key string) int {
	n := 0
	for i := range p.warned {
		if p.warned[i].key() == key {
			n++
		}
	}
	return n
}

// warn puts w in force for left calls of its loop's nodes.
func (p *pause) warn(w Warning, left int) {
	p.warned = append(p.warned, w)
	if len(p.warned) > maxWarned {
		p.warned = p.warned[len(p.warned)-maxWarned:]
	}
	p.left = left
	p.issued++
	p.changes++
}

// heed counts a call of node against the warning in force and returns it
// when that call ends its window: the loop heeded it, and its count
// starts over.
func (p *pause) heed(node string) *Warning {
	w := p.warning()
	if w == nil || !slices.Contains(w.Nodes, node) {
		return nil
	}
	if p.left--; p.left > 0 {
		return nil
	}
	heeded := *w
	p.answer(heeded.key())
	return &heeded
}

// answer removes and returns the warnings of the loop of key; the warning
// in force goes with them when it is that loop's.
func (p *pause) answer(key string) []Warning {
	if w := p.warning(); w != nil && w.key() == key {
		p.left = 0
	}
	var out []Warning
	kept := p.warned[:0]
	for _, w := range p.warned {
		if w.key() == key {
			out = append(out, w)
		} else {
			kept = append(kept, w)
		}
	}
	p.warned = kept
	if len(out) > 0 {
		p.changes++
	}
	return out
}
