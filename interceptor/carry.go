package interceptor

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// Keys under which the guard keeps what it must not lose.
const (
	// versionChangeID marks executions that run with the guard. Executions
	// started before the guard was installed lack the marker, and replay
	// finds workflow.DefaultVersion: the guard stays out of their way.
	versionChangeID = "loopguard"
	// Each change of the guard's own commands gets a version, so histories
	// recorded by an older guard replay as they were recorded.
	versionFirst    = workflow.Version(1) // the first guarded release
	versionEchoWait = workflow.Version(2) // fail/observe halts wait for the loop.halted echo
	versionStopWins = workflow.Version(3) // a human's halt pauses even in observe mode; one pause at a time
	// versionSafety: parallel branches share one halt and one decision;
	// cancellation while paused returns the cancellation; signals the guard
	// does not take reach the workflow, early ones are not lost; paused time
	// does not count as runtime; echoes are awaited when the workflow ends.
	versionSafety  = workflow.Version(4)
	guardedVersion = versionSafety // what new executions run
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
	// A new execution consults GuardWorkflow; a replay (or a continued
	// guarded run) must follow what its history says, whatever the hook.
	wanted := carry != nil || workflow.IsReplaying(ctx) ||
		g.hooks.guardWorkflow == nil || g.hooks.guardWorkflow(g.info)
	if !wanted {
		return nil
	}
	g.version = workflow.GetVersion(ctx, versionChangeID, workflow.DefaultVersion, guardedVersion)
	if g.version < versionFirst {
		return nil
	}

	pin := g.cfg
	if carry != nil {
		pin = carry.Config
	}
	// The config in force is the one recorded when the execution started,
	// not the worker's current Options: redeploying with other thresholds
	// must not change the commands an in-flight history replays.
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return pin }).Get(&g.cfg); err != nil {
		return fmt.Errorf("loopguard: read pinned config: %w", err)
	}
	g.active = true
	g.pause.early = g.version >= versionSafety

	if carry != nil {
		st, err := detect.Restore(g.cfg.Policy, carry.State)
		if err != nil {
			g.next.GetLogger(ctx).Error("loopguard: carried detector state unreadable, starting afresh", "error", err)
			st = detect.NewState(g.cfg.Policy)
		}
		g.state, g.halts = st, carry.Halts
	} else {
		g.state = detect.NewState(g.cfg.Policy)
	}
	return g.registerUpdates(ctx)
}

// readCarry reads the state a previous run carried over, if any.
func readCarry(ctx workflow.Context) (*carried, error) {
	p := sdkinterceptor.WorkflowHeader(ctx)[carryHeader]
	if p == nil {
		return nil, nil
	}
	var c carried
	if err := converter.GetDefaultDataConverter().FromPayload(p, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// writeCarry stores the guard's state in the header of the next run.
func (g *guard) writeCarry(ctx workflow.Context) error {
	g.observeReady(ctx)
	state, err := json.Marshal(g.state)
	if err != nil {
		return fmt.Errorf("loopguard: snapshot state: %w", err)
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(carried{Config: g.cfg, State: state, Halts: g.halts})
	if err != nil {
		return fmt.Errorf("loopguard: encode carried state: %w", err)
	}
	header := sdkinterceptor.WorkflowHeader(ctx)
	if header == nil {
		return fmt.Errorf("loopguard: no header to carry state in")
	}
	header[carryHeader] = p
	return nil
}
