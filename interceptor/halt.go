package interceptor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Metric names, recorded through the workflow metrics handler (which
// suppresses them during replay).
const (
	MetricHalts       = "loopguard_halts"
	MetricWarnings    = "loopguard_warnings"
	MetricHeeded      = "loopguard_warnings_heeded"
	MetricResumes     = "loopguard_resumes"
	MetricEscalations = "loopguard_escalations"
)

// suggestions are the suggested actions per reason, after seed 000.
var suggestions = map[detect.Reason][]string{
	protocol.ReasonBudgetExceeded: {"resume with a higher limit (extend) if the loop is still converging", "escalate to stop the loop", "tighten the agent's context pack"},
	protocol.ReasonStalled:        {"switch to interactive: review the evidence", "spawn a reconciliation or reviewer node", "tighten the context pack or update the docs contract", "escalate to stop the loop"},
	protocol.ReasonOscillating:    {"switch to interactive: pick one of the alternating outputs", "spawn a reconciliation node", "escalate to stop the loop"},
	protocol.ReasonRepeatedError:  {"fix the root cause of the error, then resume", "escalate to stop the loop"},
	protocol.ReasonUserStop:       {"resume to continue", "escalate to stop the loop"},
}

// halt carries out a trip according to the policy, as the core decides
// it. It returns nil when the call may go ahead (warned, resumed,
// observed), the LoopEscalated error when it must not, and the
// cancellation when the workflow was canceled while paused.
func (g *guard) halt(ctx workflow.Context, node string, trip *detect.Trip) error {
	w, ev, policy := g.trip(node, trip, workflow.Now(ctx))
	if w != nil {
		g.warn(ctx, trip, *w)
		return nil
	}
	p := &g.pause

	log := g.next.GetLogger(ctx)
	log.Warn("loopguard: loop halted", "reason", ev.HaltReason, "detector", ev.Detector,
		"node", ev.Node, "cycleId", ev.CycleID, "iteration", ev.Iteration, "message", ev.Message, "onHalt", policy)
	g.countHalt(ctx, ev, policy)
	g.raiseHalted(ctx, ev, policy)

	switch esc, held := g.raised(trip, policy); {
	case esc != nil:
		return g.escalate(ctx, trip, *esc)
	case !held:
		return nil
	}

	// A halt the handler decides is published before the handler runs (a
	// hung handler must not hide it from operators), and a halt a human
	// answered while loop.halted was being raised starts no handler.
	published := g.handler != nil && p.decision == nil
	if published {
		g.publish(ctx, protocol.StateHalted, &ev)
		g.showDetails(ctx, handlerDetails(ev)+currentDetails(g.cfg, protocol.StateHalted, &ev))
	}
	var hd HandlerDecision
	p.handling = 0
	if p.decision == nil {
		hd = g.handle(ctx, ev)
	}
	if d, ok := g.handled(trip, hd, workflow.Now(ctx)); ok {
		// The workflow's own recovery decided before any human did.
		if d.Action == protocol.ActionEscalate {
			return g.escalate(ctx, trip, d)
		}
		if published {
			g.publish(ctx, protocol.StateRunning, nil)
		} else {
			g.showDetails(ctx, guidanceDetails(g.guidance)) // no command: the halt was never published
		}
		log.Info("loopguard: loop resumed by the halt handler", "reason", d.Reason, "haltSeq", d.HaltSeq)
		g.countDecision(ctx, MetricResumes, &ev)
		return nil
	}
	g.hold()
	if published {
		g.showDetails(ctx, currentDetails(g.cfg, protocol.StateHalted, &ev)) // no command: the handler handed over
	} else {
		g.publish(ctx, protocol.StateHalted, &ev)
	}
	d, ext, err := g.awaitDecision(ctx, ev, g.cfg.PauseTimeout-p.handling)
	if err != nil {
		// Canceled while paused: the call returns the cancellation, as any
		// blocked workflow call would, and nothing is escalated.
		g.decided(trip, d, detect.Extension{}, workflow.Now(ctx))
		log.Info("loopguard: workflow canceled while paused", "haltSeq", d.HaltSeq)
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		g.publish(dctx, protocol.StateRunning, nil)
		return err
	}
	g.recordPauseWait(ctx, ev, d)
	if d.Action == protocol.ActionResume {
		g.decided(trip, d, ext, workflow.Now(ctx))
		log.Info("loopguard: loop resumed", "by", d.By, "reason", d.Reason, "haltSeq", d.HaltSeq)
		g.countDecision(ctx, MetricResumes, &ev)
		g.publish(ctx, protocol.StateRunning, nil)
		return nil
	}
	return g.escalate(ctx, trip, d)
}

// awaitDecision blocks the paused call until a human decides, or the pause
// timeout decides for them. workflow.Await is durable: no timer, no busy
// wait, unless a PauseTimeout asks for one. A cancellation returns the
// context's error with an ActionCancel decision.
func (g *guard) awaitDecision(ctx workflow.Context, ev protocol.HaltEvent, timeout time.Duration) (protocol.Decision, detect.Extension, error) {
	p := &g.pause
	decided := func() bool { return p.decision != nil }
	var err error
	// A decision may come before the pause (during the halt handler): no
	// timer then.
	if g.cfg.PauseTimeout > 0 && !decided() {
		var ok bool
		ok, err = workflow.AwaitWithTimeout(ctx, max(timeout, time.Nanosecond), decided)
		if err == nil && !ok {
			g.pauseTimedOut()
		}
	} else {
		err = workflow.Await(ctx, decided)
	}
	if p.decision == nil {
		if err == nil {
			err = ctx.Err()
		}
		return g.canceled(), detect.Extension{}, err
	}
	return *p.decision, p.extend, nil
}

// escalate ends a halt with the LoopEscalated error.
func (g *guard) escalate(ctx workflow.Context, trip *detect.Trip, d protocol.Decision) error {
	p := &g.pause
	ev := *p.halt
	g.decided(trip, d, detect.Extension{}, workflow.Now(ctx))
	g.next.GetLogger(ctx).Warn("loopguard: loop escalated", "by", d.By, "reason", d.Reason, "haltSeq", d.HaltSeq)
	g.countDecision(ctx, MetricEscalations, &ev)
	g.publish(ctx, protocol.StateEscalated, &ev)
	return newEscalatedError(Escalation{Reason: d.Reason, By: d.By, Halt: ev})
}

// publish shows the guard's state where operators look: the memo, the
// optional search attribute, and the workflow's current details in the UI.
// The memo and search attribute upserts are commands, made only on halts
// and decisions, never on the normal path.
func (g *guard) publish(ctx workflow.Context, s protocol.State, ev *protocol.HaltEvent) {
	g.shown = s
	g.writeMemo(ctx, s, ev)
	var updates []temporal.SearchAttributeUpdate
	if g.cfg.SearchAttribute != "" {
		value := string(s)
		if ev != nil && s != protocol.StateRunning {
			value += ":" + string(ev.HaltReason)
		}
		updates = append(updates, temporal.NewSearchAttributeKeyKeyword(g.cfg.SearchAttribute).ValueSet(value))
	}
	if name := g.cfg.PausedSince; name != "" {
		// When the pause began, from the workflow's clock: a count query
		// can then tell how long pauses have lasted, whichever worker asks
		// and however often workers restart.
		since := temporal.NewSearchAttributeKeyTime(name)
		if s == protocol.StateHalted {
			updates = append(updates, since.ValueSet(g.pause.since))
		} else {
			updates = append(updates, since.ValueUnset())
		}
	}
	if len(updates) > 0 {
		if err := g.next.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
			g.next.GetLogger(ctx).Warn("loopguard: search attribute upsert failed", "error", err)
		}
	}
	text := currentDetails(g.cfg, s, ev)
	if s == protocol.StateRunning {
		text = guidanceDetails(g.guidance)
	}
	g.showDetails(ctx, text)
}

// writeMemo upserts the guard's memo entry: state s, halt ev, and the
// warnings.
func (g *guard) writeMemo(ctx workflow.Context, s protocol.State, ev *protocol.HaltEvent) {
	summary := memoSummary{State: s}
	if ev != nil {
		summary.Reason, summary.Detector, summary.Node = ev.HaltReason, ev.Detector, ev.Node
		summary.CycleID, summary.Iteration, summary.Seq = ev.CycleID, ev.Iteration, ev.Seq
	}
	summary.Warnings = memoWarnings(ev, g.pause.Warned)
	g.memoHalt, g.memoAt = ev, g.pause.changes
	if err := g.next.UpsertMemo(ctx, map[string]any{g.cfg.MemoKey: summary}); err != nil {
		g.next.GetLogger(ctx).Warn("loopguard: memo upsert failed", "error", err)
	}
}

// refreshMemo writes the memo again when the warnings changed since it was
// last written: a warning was issued or heeded, or a halt that
// did not publish (observed, or resumed by the halt handler) answered some.
// It runs at the next guarded call, so that a UI reader sees what the
// calls are told.
func (g *guard) refreshMemo(ctx workflow.Context) {
	if g.pause.changes == g.memoAt {
		return
	}
	g.writeMemo(ctx, pick(g.shown, protocol.StateRunning), g.memoHalt)
}

// showDetails sets the workflow's current details to the guard's text, or
// clears the guard's text (text ""). It keeps what the workflow set itself:
// the workflow's own details come back when the guard's text goes, and
// details the workflow set meanwhile are left alone.
func (g *guard) showDetails(ctx workflow.Context, text string) {
	cur := workflow.GetCurrentDetails(ctx)
	if text == "" {
		if g.details != "" && cur == g.details {
			workflow.SetCurrentDetails(ctx, g.ownDetails)
		}
		g.details = ""
		return
	}
	if g.details == "" || cur != g.details {
		g.ownDetails = cur
	}
	g.details = text
	workflow.SetCurrentDetails(ctx, text)
}

// memoSummary is the memo entry the guard keeps.
type memoSummary struct {
	State     protocol.State      `json:"state"`
	Reason    protocol.HaltReason `json:"haltReason,omitempty"`
	Detector  detect.Detector     `json:"detector,omitempty"`
	Node      string              `json:"node,omitempty"`
	CycleID   string              `json:"cycleId,omitempty"`
	Iteration int                 `json:"iteration,omitempty"`
	Seq       int                 `json:"seq,omitempty"`
	// Warnings are the halt's unheeded warnings, then those in
	// force for other loops: at most maxWarned.
	Warnings []memoWarning `json:"warnings,omitempty"`
}

// memoWarning is what a UI reader needs of a warning.
type memoWarning struct {
	N       int                 `json:"n"`
	Of      int                 `json:"of"`
	Reason  protocol.HaltReason `json:"reason"`
	Node    string              `json:"node"`
	Message string              `json:"message"`
}

// maxMemoMessage bounds a warning's message in the memo, which every list
// of workflows may fetch.
const maxMemoMessage = 200

// memoWarnings lists the warnings of halt ev (nil: none), then the
// warnings in force, at most maxWarned.
func memoWarnings(ev *protocol.HaltEvent, warned []protocol.Warning) []memoWarning {
	var out []memoWarning
	for _, ws := range [2][]protocol.Warning{haltWarnings(ev), warned} {
		for _, w := range ws {
			if len(out) == maxWarned {
				return out
			}
			out = append(out, memoWarning{N: w.N, Of: w.Of, Reason: w.Reason, Node: w.Node, Message: cutUTF8(w.Message, maxMemoMessage)})
		}
	}
	return out
}

func haltWarnings(ev *protocol.HaltEvent) []protocol.Warning {
	if ev == nil {
		return nil
	}
	return ev.Warnings
}

// haltedSignal is the input of the local activity that raises loop.halted.
type haltedSignal struct {
	Signal     string             `json:"signal"`
	WorkflowID string             `json:"workflowId"`
	RunID      string             `json:"runId"`
	Supervisor string             `json:"supervisor,omitempty"`
	Event      protocol.HaltEvent `json:"event"`
}

// raiseHalted puts loop.halted into the workflow's own history (and the
// supervisor's). A workflow cannot signal its own execution through
// SignalExternalWorkflow (temporalio/temporal#682), so a local activity
// signals it through the worker's client. A failure is logged, never fatal:
// the halt itself stands, with its evidence in the status query and memo.
func (g *guard) raiseHalted(ctx workflow.Context, ev protocol.HaltEvent, policy protocol.OnHalt) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: g.cfg.HaltSignalTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	in := haltedSignal{
		Signal:     g.cfg.HaltedSignal,
		WorkflowID: ev.WorkflowID,
		RunID:      ev.RunID,
		Supervisor: g.cfg.Supervisor,
		Event:      ev,
	}
	g.raising = true
	fut := workflow.ExecuteLocalActivity(lctx, raiseHaltedSignal, in)
	g.raising = false
	if err := fut.Get(lctx, nil); err != nil {
		g.next.GetLogger(ctx).Warn("loopguard: could not raise loop.halted", "error", err)
		return
	}
	// The echo is awaited once, when the workflow ends (awaitEchoes): the
	// call goes on in this workflow task.
	g.unechoed = append(g.unechoed, echoKey{seq: ev.Seq, at: ev.WorkflowTime})
}

// awaitEchoes runs when the workflow function has returned:
// the server refuses to complete a workflow whose task saw a new event
// arrive, so the loop.halted signals this run raised must be in history
// first. They are in the server's hands already; the timeout only guards
// against an echo that can never come (a reset that drops signals).
func (g *guard) awaitEchoes(ctx workflow.Context) {
	if !g.active || len(g.unechoed) == 0 {
		return
	}
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	_, _ = workflow.AwaitWithTimeout(ctx, g.cfg.HaltSignalTimeout, func() bool { return len(g.unechoed) == 0 })
}

// echoed strikes the halt an echo names off the halts awaiting their echo.
// An echo that names none of them (a stale one, re-applied by a reset) is
// still the guard's, but settles nothing.
func (g *guard) echoed(ev protocol.HaltEvent) {
	for i, k := range g.unechoed {
		if k.seq == ev.Seq && k.at.Equal(ev.WorkflowTime) {
			g.unechoed = append(g.unechoed[:i], g.unechoed[i+1:]...)
			return
		}
	}
}

// raiseHaltedSignal is the local activity that sends loop.halted. A failed
// supervisor signal is logged, not returned: a retry would signal the halted
// workflow twice.
func raiseHaltedSignal(ctx context.Context, in haltedSignal) error {
	c := activity.GetClient(ctx)
	if v := reflect.ValueOf(c); c == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		// The SDK's test environment runs local activities without a client.
		return errors.New("no client in the activity context")
	}
	if err := c.SignalWorkflow(ctx, in.WorkflowID, in.RunID, in.Signal, in.Event); err != nil {
		return fmt.Errorf("signal %s to %s: %w", in.Signal, in.WorkflowID, err)
	}
	if in.Supervisor != "" && in.Supervisor != in.WorkflowID {
		if err := c.SignalWorkflow(ctx, in.Supervisor, "", in.Signal, in.Event); err != nil {
			activity.GetLogger(ctx).Warn("loopguard: could not signal the supervisor", "supervisor", in.Supervisor, "error", err)
		}
	}
	return nil
}
