package workflows

import (
	"github.com/loopguard/loopguard/interceptor/protocol"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// Supervisor settings.
const (
	// HaltedQuery is the Supervisor's query: the halts it received, as
	// []protocol.HaltEvent, oldest first.
	HaltedQuery = "halted"
	// SupervisorMaxHalts bounds the halts the Supervisor keeps (the newest).
	SupervisorMaxHalts = 100
	// SupervisorSignalsPerRun is how many loop.halted signals one run of
	// the Supervisor takes before it continues as new, keeping its history
	// bounded. It also continues as new when the server suggests it.
	SupervisorSignalsPerRun = 200
	// SupervisorMemoKey is the memo entry that carries the kept halts into
	// the next run.
	SupervisorMemoKey = "supervisor.halted"
)

// Supervisor collects the loop.halted signals of every guarded workflow
// whose guard names it (Options.SupervisorWorkflowID): one long-running
// workflow to ask "what is stuck?". The HaltedQuery query returns the
// newest SupervisorMaxHalts halts, oldest first; a halt delivered twice
// (same workflow, run and Seq) is kept once.
//
// Every SupervisorSignalsPerRun signals, or when the server suggests it, the
// Supervisor drains the signals already delivered and continues as new. The
// kept halts travel in the SupervisorMemoKey memo entry (memo is carried
// across continue-as-new), so the workflow needs no input and starts the
// same way the first time and after each continue-as-new.
func Supervisor(ctx workflow.Context) error {
	logger := workflow.GetLogger(ctx)
	halts := carriedHalts(ctx)
	if err := workflow.SetQueryHandler(ctx, HaltedQuery, func() ([]protocol.HaltEvent, error) {
		return append([]protocol.HaltEvent{}, halts...), nil
	}); err != nil {
		return err
	}

	signals := workflow.GetSignalChannel(ctx, protocol.DefaultHaltedSignal)
	received := 0
	keep := func(ev protocol.HaltEvent) {
		received++
		halts = appendHalt(halts, ev)
		logger.Info("Loop halted", "workflowId", ev.WorkflowID, "runId", ev.RunID,
			"reason", ev.HaltReason, "node", ev.Node, "cycleId", ev.CycleID, "seq", ev.Seq)
	}
	for received < SupervisorSignalsPerRun && !workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		var ev protocol.HaltEvent
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &ev) })
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		keep(ev)
	}

	// Signals delivered before the continue-as-new would be lost: take them.
	for {
		var ev protocol.HaltEvent
		if !signals.ReceiveAsync(&ev) {
			break
		}
		keep(ev)
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{SupervisorMemoKey: halts}); err != nil {
		return err
	}
	logger.Info("Supervisor continues as new", "signals", received, "kept", len(halts))
	return workflow.NewContinueAsNewError(ctx, Supervisor)
}

// appendHalt adds ev unless it is already kept, dropping the oldest halts
// past SupervisorMaxHalts.
func appendHalt(halts []protocol.HaltEvent, ev protocol.HaltEvent) []protocol.HaltEvent {
	if ev.WorkflowID != "" && ev.Seq > 0 {
		for _, h := range halts {
			if h.WorkflowID == ev.WorkflowID && h.RunID == ev.RunID && h.Seq == ev.Seq {
				return halts
			}
		}
	}
	halts = append(halts, ev)
	if n := len(halts) - SupervisorMaxHalts; n > 0 {
		halts = append(halts[:0:0], halts[n:]...)
	}
	return halts
}

// carriedHalts reads the halts the previous run left in the memo.
func carriedHalts(ctx workflow.Context) []protocol.HaltEvent {
	memo := workflow.GetInfo(ctx).Memo
	if memo == nil || memo.GetFields()[SupervisorMemoKey] == nil {
		return nil
	}
	var halts []protocol.HaltEvent
	if err := converter.GetDefaultDataConverter().FromPayload(memo.GetFields()[SupervisorMemoKey], &halts); err != nil {
		workflow.GetLogger(ctx).Warn("Supervisor: cannot read the carried halts, starting empty", "error", err)
		return nil
	}
	if n := len(halts) - SupervisorMaxHalts; n > 0 {
		halts = halts[n:]
	}
	return halts
}
