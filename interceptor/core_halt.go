package interceptor

import (
	"fmt"
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The core's halt: a trip is warned or halted (trip), the halt is raised
// by the driver and the policy says what follows (raised), and whatever
// ends it goes through one of the ends below (observe in raised, the
// handler's resume in handled, every other decision in decided, the
// cancellation of a paused call in canceled), each of which ends the
// halt through endHalt.

// trip is the core's word on a trip a call of node met at workflow time
// now: a warning, issued (the call goes on), or a halt, now in force,
// with what its policy does. The driver raises the halt (its log, metric
// and loop.halted) and then calls raised.
func (c *core) trip(node string, t *detect.Trip, now time.Time) (*protocol.Warning, protocol.HaltEvent, protocol.OnHalt) {
	if c.warnable(t) {
		w := c.issueWarning(t)
		return &w, protocol.HaltEvent{}, ""
	}
	ev, policy := c.beginHalt(node, t, now)
	return nil, ev, policy
}

// raised says what the policy makes of the halt of t the driver has
// raised: observe ends it here (the call goes on); fail returns the
// escalation, which the driver ends with decided and returns as the
// call's error; pause holds the call (held) until the halt handler or a
// decision ends the halt. It runs once the halt is raised, not before:
// input the workflow took while loop.halted was raised is in the state
// by then.
func (c *core) raised(t *detect.Trip, policy protocol.OnHalt) (escalation *protocol.Decision, held bool) {
	switch policy {
	case protocol.OnHaltObserve:
		c.endHalt(t, nil, detect.Extension{}, -1)
		return nil, false
	case protocol.OnHaltFail:
		return &protocol.Decision{Action: protocol.ActionEscalate, Reason: "policy: fail on halt", By: "loopguard", HaltSeq: c.pause.halt.Seq}, false
	}
	return nil, true
}

// hold pauses the halt in force: a human (or the pause timeout, or the
// cancellation) decides now, the halt handler, if any, having handed over.
func (c *core) hold() {
	c.pause.set(phasePaused, nil, "", time.Time{}, nil)
}

// handled takes the halt handler's decision hd on the halt of t in force,
// decided at now: a resume ends the halt here; an escalation is returned
// for the driver to end with decided (it fails the call). A handler that
// handed over (no action) leaves the halt to a human, and a decision that
// came after a human's (or the pause timeout's, or the cancellation's)
// is dropped: ok is false.
func (c *core) handled(t *detect.Trip, hd HandlerDecision, now time.Time) (d protocol.Decision, ok bool) {
	if hd.Action == "" || c.pause.decision != nil {
		return protocol.Decision{}, false
	}
	d = hd.decision(c.pause.halt.Seq)
	if d.Action == protocol.ActionResume {
		c.handlerResumed(t, d, now)
	}
	return d, true
}

// decided ends the halt of t in force with d, a human's, the pause
// timeout's, the fail policy's, the handler's escalation or the
// cancellation's, taken at workflow time now (a resume extends the
// tripped limit by ext).
func (c *core) decided(t *detect.Trip, d protocol.Decision, ext detect.Extension, now time.Time) {
	// The time the halt held the workflow comes off the loop (endHalt).
	c.endHalt(t, &d, ext, now.Sub(c.pause.since))
}

// canceled is what the workflow's cancellation makes of the paused halt
// when nobody decided it: the paused call returns the cancellation (the
// driver ends the halt with decided d and the call is never made).
func (c *core) canceled() protocol.Decision { return c.canceledDecision(c.pause.halt.Seq) }

// beginHalt puts the halt of trip, met by a call of node at workflow time
// now, in force, and says what it does: from here until the halt ends,
// status shows it and calls from other branches wait for its outcome. It
// is the halt's state change without its commands (the analysis of past
// histories runs it).
func (c *core) beginHalt(node string, trip *detect.Trip, now time.Time) (protocol.HaltEvent, protocol.OnHalt) {
	c.halts++
	c.guidance = nil // the loop halted again: the guidance did not help
	policy := c.haltPolicy(trip)
	ev := c.haltEvent(trip)
	if ev.Node == "" {
		// A human stop names no node: it is the call it stops.
		ev.Node = node
	}
	ev.Observed = policy == protocol.OnHaltObserve
	c.pause.set(phaseHalting, &ev, policy, now, nil)
	return ev, policy
}

// haltPolicy is what the halt of trip does under the options.
func (c *core) haltPolicy(trip *detect.Trip) protocol.OnHalt {
	if trip.Reason == protocol.ReasonUserStop && c.cfg.OnHalt == protocol.OnHaltObserve {
		// Shadow mode is for the detectors; a human who asks to stop means it.
		return protocol.OnHaltPause
	}
	return c.cfg.OnHalt
}

// endHalt ends the halt of trip in force with decision d, or as observe
// does (d nil): the guard's state change, without its commands (the
// analysis of past histories runs it). A resume extends the tripped limit
// by ext. However the halt ends, the loop is not charged pausedFor, the
// time it was paused (negative: it was not). An escalation resets the
// tripped detector: if the workflow handles the error and carries on, the
// guard watches the new course from a clean slate.
func (c *core) endHalt(trip *detect.Trip, d *protocol.Decision, ext detect.Extension, pausedFor time.Duration) {
	p := &c.pause
	if pausedFor >= 0 && d != nil {
		// Time spent paused is the human's, not the loop's, whatever
		// ended the halt. This is the one place that decides it: callers
		// pass the time the halt held the workflow.
		c.state.Paused(pausedFor)
	}
	switch {
	case d == nil:
		c.state.Resume(trip, detect.Extension{})
		p.set(phaseRunning, nil, "", time.Time{}, nil)
	case d.Action == protocol.ActionCancel:
		// The workflow was canceled while paused: the call returns the
		// cancellation and the trip stays, so a workflow that survives it
		// meets the halt again at its next call.
		p.set(phaseRunning, nil, "", time.Time{}, d)
	case d.Action == protocol.ActionResume:
		c.state.Resume(trip, ext)
		c.guide(*p.halt, *d)
		p.set(phaseRunning, nil, "", time.Time{}, d)
	default:
		p.set(phaseEscalated, nil, "", time.Time{}, d)
		c.state.Resume(trip, detect.Extension{})
	}
}

// canceledDecision is what the workflow's cancellation decides of the
// pause of halt seq that nobody answered: the paused call returns the
// cancellation and nothing is escalated (ActionCancel).
func (c *core) canceledDecision(seq int) protocol.Decision {
	return protocol.Decision{Action: protocol.ActionCancel, Reason: "workflow canceled while paused", By: "loopguard", HaltSeq: seq}
}

// pauseTimedOut decides a pause nobody answered within PauseTimeout.
func (c *core) pauseTimedOut() {
	c.pause.decide(protocol.Decision{
		Action: protocol.Action(c.cfg.OnPauseTimeout),
		Reason: fmt.Sprintf("no decision within the pause timeout of %s", c.cfg.PauseTimeout),
		By:     "loopguard",
	}, detect.Extension{})
}

// haltEvent builds the loop.halted payload for a trip.
func (c *core) haltEvent(t *detect.Trip) protocol.HaltEvent {
	return protocol.HaltEvent{
		CycleID:          t.CycleID,
		HaltReason:       t.Reason,
		Evidence:         t.Evidence,
		SuggestedActions: suggestions[t.Reason],
		Detector:         t.Detector,
		Message:          t.Message,
		Node:             t.Node,
		Iteration:        t.Iteration,
		MaxIterations:    t.MaxIterations,
		WorkflowTime:     t.At,
		WorkflowID:       c.info.WorkflowExecution.ID,
		RunID:            c.info.WorkflowExecution.RunID,
		WorkflowType:     c.info.WorkflowType.Name,
		Seq:              c.halts,
		Loop:             t.Loop,
	}
}

// handlerResumed ends the halt of trip with the halt handler's resume d,
// taken at workflow time now: the state change without its commands (the
// analysis of past histories runs it too).
func (c *core) handlerResumed(trip *detect.Trip, d protocol.Decision, now time.Time) {
	// The handler's time, like a human's, is not the loop's.
	c.endHalt(trip, &d, detect.Extension{}, now.Sub(c.pause.since))
}
