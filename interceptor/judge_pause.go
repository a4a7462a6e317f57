package interceptor

import (
	"slices"
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Judged returns the warnings and halts so far without forgetting them
// (Verdicts forgets): a reader that follows a growing history shows them
// while later decisions may still be noted on them.
func (j *judge) Judged() []Verdict { return slices.Clone(j.verdicts) }

// Resumed resumes halt ev, one of the Judge's own, as a human's resume
// does, at time at: the end of the Temporal Workflow Pause that answered
// it (the execution unpaused, by and for reason). The Judge answered the
// halt as observe does when it met it, so that the calls already
// scheduled while the pause was landing were judged too; the resume
// starts the loop over again from here, as the guard's resume does, and
// the time the pause held the workflow since the halt comes off the loop.
// It reports false when the Judge follows recorded decisions (Pin) or a
// recorded halt holds a call: those halts end as the history says.
func (j *judge) Resumed(ev protocol.HaltEvent, by, reason string, at time.Time) bool {
	g := &j.g
	if j.recorded || j.blocked != nil || !j.guarded || g.pause.inForce() {
		return false
	}
	trip := &detect.Trip{Reason: ev.HaltReason, Detector: ev.Detector, Node: ev.Node, CycleID: ev.CycleID,
		Iteration: ev.Iteration, MaxIterations: ev.MaxIterations, Message: ev.Message, Evidence: ev.Evidence,
		At: ev.WorkflowTime, Loop: ev.Loop}
	if ev.HaltReason == protocol.ReasonUserStop {
		trip.Node = "" // a human's stop names no node: the halt took the call's
	}
	// The halt is in force again, paused since it was raised, for the
	// guard's own end of a halt to end it.
	g.pause.set(phaseHalting, &ev, protocol.OnHaltPause, ev.WorkflowTime, nil)
	g.hold()
	j.now = at
	j.answer(trip, protocol.Decision{Action: protocol.ActionResume, Reason: reason, By: by, HaltSeq: ev.Seq}, detect.Extension{})
	return true
}
