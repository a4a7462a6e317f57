package interceptor

import (
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// maxAdmitRounds bounds how many halts one call can meet in a row. Each
// resume clears the detector that tripped, so a call meets at most one halt
// per detector; the bound only protects observe mode from a detector that
// keeps tripping.
const maxAdmitRounds = 32

// guard is the per-execution loop guard: it feeds guarded calls and their
// results to the detectors and carries out halts. All of its state is
// workflow memory, rebuilt identically by replay.
type guard struct {
	// core is the guard's state and its decisions; the guard is the
	// driver that carries them out in the workflow (commands, publishing,
	// the halt handler, waits).
	core
	next sdkinterceptor.WorkflowOutboundInterceptor

	// raw receives each result's payload while observation reads it.
	raw converter.RawValue

	// noticed is set while the workflow's outgoing header holds a notice
	// (its own, or the one it was started with), which the next call
	// without one must take out.
	noticed bool
	// repeats counts the run's calls by action (Options.CountRepeats).
	repeats repeats
	// sent is the last notice encoded, and its payload: a loop's calls
	// carry the same notice call after call, encoded once.
	sent        protocol.Notice
	sentPayload *commonpb.Payload
	// handler is the workflow's halt handler (SetHaltHandler).
	handler HaltHandler

	// raising is set while the guard runs its own local activity, which
	// must not count as a guarded call.
	raising bool

	// unechoed are the halts whose loop.halted this run raised and whose
	// echo it has not seen yet: the run waits for them when the workflow
	// ends.
	unechoed []echoKey

	// details is the current details text the guard last set, and
	// ownDetails what the workflow had set before: the guard only clears
	// what it set.
	details, ownDetails string

	// shown is the state last published (memo, search attribute).
	shown protocol.State
	// memoHalt is the halt the memo last showed, and memoAt the warnings'
	// changes it shows (pause.changes).
	memoHalt *protocol.HaltEvent
	memoAt   int

	lastRejected *protocol.Rejection
	// refused are the refused answers Status.Refused lists (operators'
	// keys set).
	refused []*protocol.Rejection
	metrics guardMetrics // instruments, made on first use (metrics.go)
}

// echoKey identifies a halt's loop.halted echo: its Seq and its workflow
// time. A stale echo re-applied by a reset carries the same Seq as a halt of
// the new run but an earlier time.
type echoKey struct {
	seq int
	at  time.Time
}

// pendingCall is a guarded call whose result the guard has yet to read.
type pendingCall struct {
	ref  detect.StepRef
	node string
	fut  workflow.Future
}

// nodeName names the node of a guarded call. A NodeName hook that panics
// is recovered, as a ResultHook is: the call is named by its type rather
// than every workflow task of every guarded workflow failing. (A task
// that panicked recorded nothing, so no history replays differently.)
func (g *guard) nodeName(d driver, kind CallKind, typ string, args []any) string {
	node, panicked := g.callNode(kind, typ, args)
	if panicked != nil {
		g.logger(d).Error("loopguard: NodeName panicked: the call is named by its type", "type", typ, "panic", fmt.Sprint(panicked))
	}
	return node
}

// admit runs before a guarded call: once no halt holds the workflow, it
// asks the core whether the call may go ahead, halting as the policy says
// when it may not. A non-nil error (LoopEscalated, the cancellation)
// replaces the call.
func (g *guard) admit(ctx workflow.Context, node string) (detect.StepRef, error) {
	g.deliver(ctx)
	if err := g.awaitHaltEnd(ctx); err != nil {
		return detect.StepRef{}, err
	}
	// Workflow time only moves when the workflow blocks: reading the
	// results and the first Begin share one clock reading.
	ref, _, err := g.enter(driver{ctx: ctx}, node, workflow.Now(ctx), func(t *detect.Trip) (time.Time, bool, error) {
		if err := g.halt(ctx, node, t); err != nil {
			return time.Time{}, false, err
		}
		return workflow.Now(ctx), true, nil // the halt waited
	})
	return ref, err
}

// enter is a call's admission as every driver runs it: the results that
// are in are read at now, then the core admits the call of node, each
// trip going to the driver's onTrip (core.begin). A call let through
// unrecorded is logged.
func (g *guard) enter(d driver, node string, now time.Time, onTrip func(*detect.Trip) (time.Time, bool, error)) (detect.StepRef, bool, error) {
	g.observeReady(d, now)
	ref, ok, err := g.begin(node, now, onTrip)
	if ok && ref.Node < 0 {
		g.logger(d).Warn("loopguard: call admitted unrecorded after repeated halts", "node", node)
	}
	return ref, ok, err
}

// awaitHaltEnd makes a call wait while another branch of the workflow holds
// a halt: parallel branches share one trip, one halt and one decision,
// rather than raising halts of their own. The wait starts at the trip
// (not only once paused) and the decision applies to every waiting call:
// an escalation escalates them all.
func (g *guard) awaitHaltEnd(ctx workflow.Context) error {
	p := &g.pause
	for p.inForce() {
		ev := p.halt
		if err := workflow.Await(ctx, func() bool { return p.resolved >= ev.Seq }); err != nil {
			return err
		}
		if d := p.last; d != nil && d.HaltSeq == ev.Seq && d.Action == protocol.ActionEscalate {
			return newEscalatedError(Escalation{Reason: d.Reason, By: d.By, Halt: *ev})
		}
	}
	return nil
}

// track remembers a started call so its result is observed later.
func (g *guard) track(ref detect.StepRef, node string, fut workflow.Future) {
	if ref.Node < 0 {
		return
	}
	g.pending = append(g.pending, pendingCall{ref: ref, node: node, fut: fut})
}

// waits reads the results that are in when the workflow is about to wait
// at now, so that a node's runtime ends when its result arrived, not when
// the workflow next calls out; for a durable timer (timer) the detectors
// also hear that the workflow waits, which tells waiting from looping (a
// timer between polls). The Judge runs it at the timers a history shows;
// live, the guard first takes the input that came in (liveWaits).
func (g *guard) waits(d driver, now time.Time, timer bool) {
	if !g.active {
		return
	}
	if len(g.pending) > 0 {
		g.observeReady(d, now)
	}
	if timer {
		g.timer(now)
	}
}

// observeReady feeds the results of finished calls to the detectors, in the
// order the calls were issued, at now, the workflow clock's (reading a
// ready future does not block, so now holds for every result).
func (g *guard) observeReady(d driver, now time.Time) {
	at := g.resultAt(now)
	kept := g.pending[:0]
	for _, p := range g.pending {
		if !p.fut.IsReady() {
			kept = append(kept, p)
			continue
		}
		obs, canceled := g.observation(d, p)
		g.result(p.ref, obs, canceled, at)
	}
	for i := len(kept); i < len(g.pending); i++ {
		g.pending[i] = pendingCall{}
	}
	g.pending = kept
}

// observation reads a finished call's result or error. Get on a ready
// future does not block and decodes the stored payload again, so the
// workflow's own Get is unaffected; into a RawValue the workflow's data
// converter only runs its codecs. canceled reports a call that ended
// canceled.
func (g *guard) observation(d driver, p pendingCall) (obs detect.Observation, canceled bool) {
	var bad string
	if r, ok := p.fut.(readFuture); ok {
		obs, canceled, bad = r.read()
	} else {
		obs, canceled, bad = g.readResult(p.node, func(ptr any) error { return p.fut.Get(d.ctx, ptr) })
	}
	if bad != "" {
		g.logger(d).Warn("loopguard: ResultHook "+bad, "node", p.node)
	}
	return obs, canceled
}

// readFuture is a future whose result was read into its observation when
// it was set (the Judge's recorded results), so that it holds no payload
// until the next call: a model call's result can be the whole
// conversation.
type readFuture interface {
	read() (obs detect.Observation, canceled bool, bad string)
}

// readResult reads the result or error of a finished call of node, which
// get decodes as a future's Get does, into what the detectors see; bad is
// for the driver to log.
func (g *guard) readResult(node string, get func(ptr any) error) (detect.Observation, bool, string) {
	// Get takes an interface, so a local RawValue would escape: the guard
	// lends its own, and lets go of the payload once its bytes are read.
	err := get(&g.raw)
	data := g.raw.Payload().GetData()
	g.raw = converter.RawValue{}
	if err != nil {
		data, err = rawResult(get)
	}
	return g.observe(node, data, err)
}

// rawResult reads a result when Get into a RawValue failed: either the call
// failed, or the workflow's data converter is not built on the SDK's
// composite converter and cannot fill a RawValue. Get into nil decodes
// nothing and returns only the call's own error; the result's bytes are
// then captured as the converter hands them over. A result no converter
// hands over reads as empty: the detectors take it as a silent success,
// not as a failure every call repeats.
func rawResult(get func(ptr any) error) ([]byte, error) {
	if err := get(nil); err != nil {
		return nil, err
	}
	var b capturedBytes
	if err := get(&b); err != nil {
		return nil, nil
	}
	return b, nil
}
