package interceptor

import (
	"encoding/json"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Keys under which the guard keeps what it must not lose.
const (
	// versionChangeID marks executions that run with the guard. Executions
	// started before the guard was installed lack the marker, and replay
	// finds workflow.DefaultVersion: the guard stays out of their way.
	versionChangeID = "loopguard"
	// guardVersion is the one version of the guard's commands this release
	// records and replays. Pre-release builds recorded versions 1 to 12
	// under the same change id: a replay that finds one of those fails its
	// workflow task with prereleaseError rather than replay commands or
	// decisions other than the ones recorded.
	guardVersion = workflow.Version(13)
	// replayWorkflowID is the workflow id the SDK's replayer gives every
	// history it is not told the id of.
	replayWorkflowID = "ReplayId"
	// carryHeader carries the guard's state across continue-as-new.
	carryHeader = "loopguard-carry"
)

// carried is what one run hands to the next on continue-as-new: the pinned
// config, the detector state and the halt history, so an agent cannot
// escape its budget by continuing as new.
type carried struct {
	Config config          `json:"config"`
	State  json.RawMessage `json:"state"`
	Halts  int             `json:"halts"`
	// Shown is the state the run last published in the memo and search
	// attribute. Continue-as-new copies both to the next run,
	// which must not show a halt or escalation of the run before it.
	Shown protocol.State `json:"shown,omitempty"`
	// Guidance is the guidance in force, and rung the
	// warnings' state.
	Guidance *protocol.Guidance `json:"guidance,omitempty"`
	rung
	// Last is the last decision carried out: the next run's
	// status shows it, and the guidance in force beside it.
	Last *protocol.Decision `json:"lastDecision,omitempty"`
}

// setup decides whether this execution is guarded and pins its config. It
// runs first in ExecuteWorkflow, in the workflow's coroutine.
func (g *guard) setup(ctx workflow.Context) error {
	g.info = workflow.GetInfo(ctx)
	carry, err := readCarry(ctx)
	if err != nil {
		// A corrupt header must not fail the workflow: start afresh, loudly.
		g.next.GetLogger(ctx).Error("loopguard: ignoring unreadable carried state", "error", err)
		carry = nil
	}
	if g.hooks.retire && !workflow.IsReplaying(ctx) {
		// Retiring: a new execution (a continued run included) is left
		// unguarded and gets no version marker; one that replays follows
		// what its history says below.
		return nil
	}
	// A new execution consults GuardWorkflow; a replay (or a continued
	// guarded run) must follow what its history says, whatever the hook.
	wanted := carry != nil || workflow.IsReplaying(ctx) ||
		g.hooks.guardWorkflow == nil || g.wants(ctx)
	if !wanted {
		g.warnNearMiss(ctx)
		return nil
	}
	// DefaultVersion as the lowest supported: a history without the marker
	// (started before the guard was installed) replays unguarded, and an
	// older marker reaches refusePrerelease instead of the SDK's bare
	// out-of-range panic.
	g.version = workflow.GetVersion(ctx, versionChangeID, workflow.DefaultVersion, guardVersion)
	if g.version == workflow.DefaultVersion {
		return nil
	}
	refusePrerelease(g.version)

	pin := g.cfg
	if carry != nil {
		pin = carry.Config
	}
	// The config in force is the one recorded when the execution started,
	// not the worker's current Options: redeploying with other thresholds
	// must not change the commands an in-flight history replays. It is
	// decoded into a zero config: the recorded JSON omits zero fields, and
	// none of the new worker's values may show through them. Decoding also
	// gives this execution maps and slices of its own.
	var pinned config
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return pin }).Get(&pinned); err != nil {
		return fmt.Errorf("loopguard: read pinned config: %w", err)
	}
	g.cfg = pinned
	g.anyWorkflowID = workflow.IsReplaying(ctx) && g.info.WorkflowExecution.ID == replayWorkflowID
	g.active = true
	g.pause = newPause()

	if carry != nil {
		if err := g.restore(carry); err != nil {
			g.next.GetLogger(ctx).Error("loopguard: carried detector state unreadable, starting afresh", "error", err)
		}
		// The guidance in force and the decision that gave it are still
		// what the loop's calls are told (no command).
		g.showDetails(ctx, guidanceDetails(g.guidance))
		if carry.Shown != "" && carry.Shown != protocol.StateRunning {
			g.publish(ctx, protocol.StateRunning, nil)
		}
	} else {
		g.state = detect.NewState(g.cfg.Policy)
	}
	return g.registerUpdates(ctx)
}

// wants asks GuardWorkflow whether a new execution is guarded. A hook that
// panics is recovered and the execution guarded: a bug in the hook must
// neither fail every workflow task nor switch the guard off silently.
func (g *guard) wants(ctx workflow.Context) (guarded bool) {
	defer func() {
		if r := recover(); r != nil {
			g.next.GetLogger(ctx).Error("loopguard: GuardWorkflow panicked: the execution is guarded", "panic", fmt.Sprint(r))
			guarded = true
		}
	}()
	return g.hooks.guardWorkflow(g.info)
}

// carry is what this run hands the next when it continues as new, once
// the run is closed (closeRun): the pinned config, the detectors' state
// and the halts, and the guidance and warnings in force and the last
// decision when there are any. Every driver carries
// a run over through it and restore, so that the next run is judged from
// the state as encoded, as the live guard's next run is.
func (c *core) carry() (carried, error) {
	state, err := json.Marshal(c.state)
	if err != nil {
		return carried{}, fmt.Errorf("loopguard: snapshot state: %w", err)
	}
	return carried{Config: c.cfg, State: state, Halts: c.halts, Guidance: c.guidance, rung: c.pause.rung, Last: c.pause.last}, nil
}

// restore starts a run from what the run before it carried (carry),
// under the config pinned. A detectors' state that cannot be read starts
// them afresh, the rest restored: the error says so, for the driver to
// report.
func (c *core) restore(cr *carried) error {
	st, err := detect.Restore(c.cfg.Policy, cr.State)
	if err != nil {
		st = detect.NewState(c.cfg.Policy)
	}
	c.state, c.halts = st, cr.Halts
	c.guidance, c.pause.rung, c.pause.last = cr.Guidance, cr.rung, cr.Last
	return err
}

// readCarry reads the state a previous run carried over, if any, written
// with the workflow's data converter (carryOnReturn).
func readCarry(ctx workflow.Context) (*carried, error) {
	p := sdkinterceptor.WorkflowHeader(ctx)[carryHeader]
	if p == nil {
		return nil, nil
	}
	var c carried
	if err := decodePayload(ctx, p, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// closeRun closes a run that continues as new, at workflow time now, as
// every driver does: the results that are in are read, then the core ends
// the run (core.endRun).
func (g *guard) closeRun(d driver, now time.Time) {
	g.observeReady(d, now)
	g.endRun(now)
}

// carryOnReturn stores the guard's state in the continue-as-new error the
// workflow returned: the state as of the run's end, not as of the moment
// the workflow built the error, encoded with the workflow's data converter.
// Calls still in flight are closed: their futures die with this run, and a
// step left open would swallow every later call of its node.
func (g *guard) carryOnReturn(ctx workflow.Context, can *workflow.ContinueAsNewError) error {
	g.closeRun(driver{ctx: ctx}, workflow.Now(ctx))
	c, err := g.carry()
	if err != nil {
		return err
	}
	c.Shown = g.shown
	p, err := encodePayload(ctx, c)
	if err != nil {
		return fmt.Errorf("loopguard: encode carried state: %w", err)
	}
	if can.Header == nil {
		can.Header = &commonpb.Header{}
	}
	if can.Header.Fields == nil {
		can.Header.Fields = map[string]*commonpb.Payload{}
	}
	can.Header.Fields[carryHeader] = p
	return nil
}
