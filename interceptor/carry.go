package interceptor

import (
	"encoding/json"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
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
	// versionSafety: everything the guard reads and writes goes through the
	// workflow's data converter; results a converter cannot hand over as a
	// RawValue are read raw; continue-as-new carries the state as of the
	// run's end, with calls still in flight closed; parallel branches share
	// one halt and one decision; cancellation while paused returns the
	// cancellation; signals the guard does not take reach the workflow,
	// early ones are not lost; paused time does not count as runtime;
	// echoes are awaited when the workflow ends.
	versionSafety = workflow.Version(4)
	// versionSteady (issue 14): non-finite metrics and costs from a
	// ResultHook are dropped, not stored; a human's stop under OnHalt
	// observe waits behind a pending detector trip instead of being
	// refused; calls in flight across a pause are not charged the pause;
	// a call the workflow canceled (a hedged call's loser) is abandoned,
	// not counted as an error; the pause's start is set in
	// PausedSinceAttribute; a run continued as new from a halted or
	// escalated run shows itself running.
	versionSteady = workflow.Version(5)
	// versionDetection3 (issue 15): new executions pin detection
	// generation 3 (DefaultPolicy), and the workflow's own signals and
	// updates are outside input to it: no repetition spans them.
	versionDetection3 = workflow.Version(6)
	// versionGuidance (issue 16): a resume may carry guidance for the
	// agent, and the calls of the loop's nodes carry it in a notice
	// header until the loop halts again.
	versionGuidance = workflow.Version(7)
	// versionWarningMemo: the memo lists the warnings in force, and is
	// written again whenever they change: at a warning, when one is
	// heeded, and at a halt that answered some without publishing. The
	// notice header is cut to MaxNoticeBytes. A halt handler races the
	// human: a decision sent while it runs ends the halt at once, and its
	// run counts towards PauseTimeout (raceHandler).
	versionWarningMemo = workflow.Version(8)
	// versionOneLoop (issue 22): the rungs and the detectors agree on the
	// loop. A resume, a warning and a halt handler's decision start the
	// loop over with one barrier in front of every detector that reads
	// repetition; news anywhere in the loop is progress for its constant
	// members' edges (detect.Policy.OneLoop, pinned with the config); a
	// loop is named by its anchor, and heeded in its own periods; the
	// handler's time is not the loop's; a halt is published before its
	// handler runs, and an answered one starts none.
	versionOneLoop = workflow.Version(9)
	// versionDetection4 (issue 23): new executions pin detection
	// generation 4 (DefaultPolicy): clocks are not progress, errors are
	// masked as results are, a JSON string holding JSON is read as that
	// JSON. The generation is pinned with the config, so executions
	// started before keep theirs; the guard's commands do not change.
	versionDetection4 = workflow.Version(10)
	// versionPauseEnd (issue 22, found by the schedule test's handler-time
	// invariant): a call whose result the guard reads while a halt is in
	// force is charged up to the halt's start, not up to the read. The
	// resume takes the pause off only the calls still in flight, so a call
	// that ended during the pause (another branch waited on it and the
	// guard read it then) was charged the part of the pause before it
	// ended. The commands do not change; runtime halts may.
	versionPauseEnd = workflow.Version(11)
	// versionLiveness (issue 30): every stuck loop halts, in every shape.
	// A warning's window counts the loop's steps, not its calls, so that a
	// round of parallel calls of one node is one step, as the detectors
	// count it (a loop of 8 parallel tool calls a round was warned forever);
	// a loop's warnings are counted however many there are (the list kept
	// for evidence holds 8, and Warnings of 9 or more never halted); and no
	// way a halt ends charges the loop the time the workflow stood paused
	// (an escalation, by a human, the pause timeout or the handler, and a
	// cancellation did). The commands do not change; decisions may.
	versionLiveness = workflow.Version(12)
	// versionHistoryTime (issues 36, 37): the guard reads time and timers
	// as the history holds them. A signed answer sent as a signal is judged
	// at the workflow time of the task that delivers it (the time of that
	// task's WorkflowTaskStarted), as an update is, not at the time of the
	// task before it, which the SDK's clock still shows while it applies the
	// signal. Contributions to this version add their line here.
	// A timer is waited on (results read, the detectors told) exactly
	// when the SDK writes a StartTimer command, where the history holds
	// its TimerStarted event: in NewTimer and NewTimerWithOptions, which
	// Sleep and the Awaits reach, for a positive duration only; a zero
	// Sleep is nothing, and AwaitWithOptions' timer counts (outbound.go).
	// New executions pin detection generation 5 (DefaultPolicy; issue
	// 37): a model response that calls tools is its tool calls, provider
	// ids and usage are masked, commentary is set aside inside arrays too.
	// The generation is pinned with the config, so executions started
	// before keep theirs; the guard's commands do not change.
	versionHistoryTime = workflow.Version(13)
	guardedVersion     = versionHistoryTime // what new executions run
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
	// attribute (version 5). Continue-as-new copies both to the next run,
	// which must not show a halt or escalation of the run before it.
	Shown State `json:"shown,omitempty"`
	// Guidance is the guidance in force (version 7), and rung the
	// warnings' state.
	Guidance *Guidance `json:"guidance,omitempty"`
	rung
	// Last is the last decision carried out (version 9): the next run's
	// status shows it, and the guidance in force beside it.
	Last *Decision `json:"lastDecision,omitempty"`
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
	g.version = workflow.GetVersion(ctx, versionChangeID, workflow.DefaultVersion, guardedVersion)
	if g.version < versionFirst {
		return nil
	}

	pin := g.cfg
	if carry != nil {
		pin = carry.Config
	}
	if g.version >= versionOneLoop {
		// Pinned below with the rest: the detectors' half of version 9.
		pin.Policy.OneLoop = true
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
	g.versioned()
	g.active = true
	g.pause = newPause(g.version)

	if carry != nil {
		if err := g.restore(carry); err != nil {
			g.next.GetLogger(ctx).Error("loopguard: carried detector state unreadable, starting afresh", "error", err)
		}
		if g.version >= versionOneLoop {
			// The guidance in force and the decision that gave it are
			// still what the loop's calls are told (no command).
			g.showDetails(ctx, guidanceDetails(g.guidance))
		}
		if g.version >= versionSteady && carry.Shown != "" && carry.Shown != StateRunning {
			g.publish(ctx, StateRunning, nil)
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
// and the halts, and the guidance and warnings in force (version 7) and
// the last decision (version 9) when there are any. Every driver carries
// a run over through it and restore, so that the next run is judged from
// the state as encoded, as the live guard's next run is.
func (c *core) carry() (carried, error) {
	state, err := json.Marshal(c.state)
	if err != nil {
		return carried{}, fmt.Errorf("loopguard: snapshot state: %w", err)
	}
	cr := carried{Config: c.cfg, State: state, Halts: c.halts, Guidance: c.guidance, rung: c.pause.rung}
	if c.version >= versionOneLoop {
		cr.Last = c.pause.last
	}
	return cr, nil
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
	if c.version >= versionGuidance {
		c.guidance = cr.Guidance
		c.pause.rung = cr.rung
	}
	if c.version >= versionOneLoop {
		c.pause.last = cr.Last
	}
	return err
}

// readCarry reads the state a previous run carried over, if any. Guard
// version 4 writes it with the workflow's data converter, older versions
// with the default one: the default converter reads what the workflow's
// cannot.
func readCarry(ctx workflow.Context) (*carried, error) {
	p := sdkinterceptor.WorkflowHeader(ctx)[carryHeader]
	if p == nil {
		return nil, nil
	}
	var c carried
	if err := decodePayload(ctx, p, &c); err != nil {
		c = carried{}
		if errDefault := converter.GetDefaultDataConverter().FromPayload(p, &c); errDefault != nil {
			return nil, err
		}
	}
	return &c, nil
}

// writeCarry stores the guard's state in the header of the next run. Before
// guard version 4 it runs when the workflow builds its continue-as-new
// error, with the default converter; from version 4 (carryOnReturn) when
// the workflow returns it.
func (g *guard) writeCarry(ctx workflow.Context) error {
	header := sdkinterceptor.WorkflowHeader(ctx)
	if header == nil {
		return fmt.Errorf("loopguard: no header to carry state in")
	}
	g.observeReady(ctx)
	c, err := g.carry() // before version 7 nothing but the config, the state and the halts
	if err != nil {
		return err
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(c)
	if err != nil {
		return fmt.Errorf("loopguard: encode carried state: %w", err)
	}
	header[carryHeader] = p
	return nil
}

// closeRun closes a run that continues as new, at workflow time now, as
// every driver does: the results that are in are read, then the core ends
// the run (core.endRun).
func (g *guard) closeRun(ctx workflow.Context, now time.Time) {
	g.observeReadyAt(ctx, now)
	g.endRun(now)
}

// carryOnReturn stores the guard's state in the continue-as-new error the
// workflow returned: the state as of the run's end, not as of the moment
// the workflow built the error, encoded with the workflow's data converter.
// Calls still in flight are closed: their futures die with this run, and a
// step left open would swallow every later call of its node.
func (g *guard) carryOnReturn(ctx workflow.Context, can *workflow.ContinueAsNewError) error {
	g.closeRun(ctx, workflow.Now(ctx))
	c, err := g.carry()
	if err != nil {
		return err
	}
	if g.version >= versionSteady {
		c.Shown = g.shown
	}
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

// refusedIsInput reports whether one of the guard's own control signals
// that it refused (nothing to answer) and passed on is outside input to
// the loop. From version 9 it is not: an operator's early escalate must
// not delay the halt it asks for.
func (c *core) refusedIsInput() bool { return c.version < versionOneLoop }
