package interceptor

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// core is the guard's state and its decisions: a call admitted, a result
// read, outside input, a trip warned or halted, the decision that ends a
// halt, the run's end. It takes no workflow.Context and issues no command:
// each step changes the state and says what follows, and a driver does it.
//
// Two drivers use it. The interceptor (guard) turns its answers into
// commands, publishing, the halt handler and durable waits; the Judge
// turns them into verdicts over a history (the analysis of past histories,
// and the watcher of running ones through it). One order of steps serves
// both, as gobreaker's beforeRequest and afterRequest serve its Execute
// and its two-step breaker alike, and as sdk-go's replayer drives a
// worker's own workflow task handler from a history: the Judge, which
// once spelled the order itself, drifted from the guard (it took another
// run's loop.halted as its own echo, and logged no NodeName panic).
//
// The order, for one guarded call at workflow time now:
//
//	node, _ := c.callNode(kind, typ, args)   // a panicking NodeName names the call by its type
//	// for each finished call, its bytes or error as the driver got them:
//	obs, canceled, bad := c.observe(p.node, data, err)
//	c.result(p.ref, obs, canceled, c.resultAt(now))
//	ref, ok, err := c.begin(node, now, onTrip)
//	    // outside input, then the detectors; at each trip t, onTrip does:
//	    w, ev, policy := c.trip(node, t, now) // a warning (the call goes on) or a halt in force
//	    // the driver raises ev (log, metric, loop.halted), then
//	    esc, held := c.raised(t, policy)      // observe: ended; fail: esc ends it (c.decided)
//	    // held (pause): the halt handler (c.handled), or c.hold() and a decision:
//	    // a human's or the pause timeout's (c.decided), or the cancellation (c.canceled)
//	c.called(node, ref.Seq)                  // counted against the warning in force
//	// the driver makes the call and keeps its result's handle in c.pending
//
// Between calls: c.signal and c.update (the guard's own input, a human's
// answer taken by c.takeInput or c.answerUpdate, or outside input),
// c.timer when the workflow waits on a durable timer, and, when a run
// continues as new, c.endRun, c.carry and, in the next run, c.restore.
// Example_core runs this order.
type core struct {
	cfg   config
	hooks hooks

	// active is false for executions started before the guard was
	// installed (and for those GuardWorkflow leaves out): calls pass through.
	active bool
	// version is the guard version the execution was started with.
	version workflow.Version
	info    *workflow.Info
	state   *detect.State

	// pending are calls whose results have not been observed yet, in the
	// order they were issued. Results are observed lazily, at the next
	// guarded call, which is where a halt would take effect anyway.
	pending []pendingCall

	// pause is the halt in force, its decision and the last outcome.
	pause pause

	// input is set when the workflow received outside input (a signal or
	// an update of its own) since its last guarded call; the next call
	// tells the detector, after the results it reads first, so that the
	// barrier falls between the calls made before the input and after it.
	input bool

	// guidance is the human's guidance in force: the calls of
	// its nodes carry it in their notice until the next halt.
	guidance *protocol.Guidance
	// halts counts the halts of the execution (HaltEvent.Seq), carried
	// across continue-as-new.
	halts int

	// held are the signed answers received as signals and not taken yet:
	// they are taken at the time of the task that delivers them
	// (answerclock.go).
	held []heldAnswer

	// verified is the last good signature of an answer (operators' keys
	// set, signed.go): an update's handler does not verify it again.
	verified *verified
	// anyWorkflowID is set when the execution replays under a workflow id
	// that is not its own: the SDK's replayer names every history
	// "ReplayId" unless told otherwise. A signed answer's run id still
	// ties it to the execution.
	anyWorkflowID bool
}

// callNode names a call by the NodeName hook, or by its type when the hook
// is unset, returns "" or panics; panicked is what a panicking hook threw.
// Every driver names its calls here, so that a hook that panics names the
// call alike live and in the analysis.
func (c *core) callNode(kind CallKind, typ string, args []any) (node string, panicked any) {
	if c.hooks.nodeName == nil {
		return typ, nil
	}
	defer func() {
		if r := recover(); r != nil {
			node, panicked = typ, r
		}
	}()
	if n := c.hooks.nodeName(Call{Kind: kind, Type: typ, Args: args}); n != "" {
		return n, nil
	}
	return typ, nil
}

// outsideInput notes that the workflow received input from outside its
// loop (a signal or an update of its own): no repetition spans it.
func (c *core) outsideInput() {
	if c.active {
		c.input = true
	}
}

// flushInput tells the detector of the outside input noted since the last
// call.
func (c *core) flushInput(now time.Time) {
	if c.input {
		c.state.Input(now)
		c.input = false
	}
}

// resultAt is the workflow time a result read at now is charged up to.
// A call that ended while a halt was in force is charged
// up to the halt's start: the time since is the human's (or the
// handler's), and the resume shifts only the calls still in flight. No
// guarded call begins during a halt, so every call read then began
// before it.
func (c *core) resultAt(now time.Time) time.Time {
	if c.pause.inForce() && c.pause.since.Before(now) {
		return c.pause.since
	}
	return now
}

// result feeds the detectors the end of call ref at workflow time at:
// its observation, or, when the workflow canceled the call itself (a
// hedged or raced call's loser, a timed-out branch), nothing: such a call
// is abandoned rather than counted as an error every loser would repeat.
func (c *core) result(ref detect.StepRef, obs detect.Observation, canceled bool, at time.Time) {
	if canceled {
		c.state.Abandon(ref, at)
		return
	}
	c.state.End(ref, obs, at)
}

// begin asks the detectors whether a call of node may go ahead at
// workflow time now, once the driver has read the results that are in:
// the outside input noted since the last call goes first, so that its
// barrier falls between the calls before it and this one. Each trip goes
// to onTrip, the driver's warning or halt, which returns the workflow
// time after it (a halt may have waited) and whether the call goes on.
// ok is false when the call must not be made (err says why, when the
// driver has an error to return); a ref whose Node is negative is a call
// let through unrecorded.
func (c *core) begin(node string, now time.Time, onTrip func(*detect.Trip) (time.Time, bool, error)) (ref detect.StepRef, ok bool, err error) {
	c.flushInput(now)
	return c.admitRounds(node, now, onTrip)
}

// admitRounds are begin's rounds once the outside input is told: after a
// halt the call asks again in the same rounds, so what came during the
// halt (signals, results of calls in flight) is told the detectors at
// the next call's begin, after this one. The Judge lets a held call go on
// here too (Judge.Wake), as the live guard does.
func (c *core) admitRounds(node string, now time.Time, onTrip func(*detect.Trip) (time.Time, bool, error)) (ref detect.StepRef, ok bool, err error) {
	for round := 0; round < maxAdmitRounds; round++ {
		var t *detect.Trip
		if ref, t = c.state.Begin(node, now); t == nil {
			return ref, true, nil
		}
		if now, ok, err = onTrip(t); !ok || err != nil {
			return detect.StepRef{}, false, err
		}
	}
	// Only reachable in observe mode with a detector that does not clear:
	// let the call through unrecorded rather than block.
	return detect.StepRef{Node: -1}, true, nil
}

// timer tells the detectors the workflow waits on a durable timer at
// now: waiting, not looping, between polls.
func (c *core) timer(now time.Time) {
	c.state.Timer(now)
}

// endRun closes a run that continues as new, at now, once the driver has
// read the results that are in: calls still in flight are abandoned
// (their futures die with the run, and a step left open would swallow
// every later call of its node), and the outside input noted is told.
func (c *core) endRun(now time.Time) {
	for _, p := range c.pending {
		c.state.Abandon(p.ref, now)
	}
	c.pending = nil
	c.flushInput(now)
}
