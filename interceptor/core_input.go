package interceptor

import (
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The core's outside input: a signal or an update is either the guard's
// own (an answer, a stop, its loop.halted echo) or input from outside the
// loop, which no repetition spans. The interceptor takes them as the SDK
// delivers them, the Judge as a history holds them; both ask here.

// signal decides how the guard takes signal name. take carries out the
// guard's resume, escalate or halt and reports whether it was taken
// (refused input is the driver's to record); own decodes a loop.halted
// and reports whether it is this execution's echo (core.echo). It
// reports whether the guard took the signal: one it did not take goes on
// to the workflow, and is noted as outside input unless it was one of the
// guard's own control signals refused (an operator's early escalate must
// not delay the halt it asks for).
func (c *core) signal(name string, take, own func() bool) (took bool) {
	switch name {
	case c.cfg.ResumeSignal, c.cfg.EscalateSignal, c.cfg.HaltSignal:
		return take()
	case c.cfg.HaltedSignal:
		if own() {
			return true
		}
	}
	c.outsideInput()
	return false
}

// update decides how the guard takes an update named name: its resume
// and escalate are answers (answer), which the detectors hear through the
// halt's end; any other is the workflow's own, outside input.
func (c *core) update(name string) (answer bool) {
	if name == c.cfg.ResumeUpdate || name == c.cfg.EscalateUpdate {
		return true
	}
	c.outsideInput()
	return false
}

// echoKind is what a loop.halted signal is to the execution that
// received it.
type echoKind uint8

const (
	// echoForeign: another execution's halt (a supervisor hears its
	// children's), or one the guard cannot read: outside input.
	echoForeign echoKind = iota
	// echoOwn: the echo of a halt this run raised.
	echoOwn
	// echoStale: the echo of a halt of this workflow's run before a
	// reset, which the server re-applies after the reset point (version
	// 4; older versions passed them on): the guard's, settling nothing.
	echoStale
)

// echo says whose halt loop.halted ev tells of. The run id identifies the
// execution; the workflow id alone would not do under the SDK's file
// replayer, which replays every history as workflow "ReplayId".
func (c *core) echo(ev protocol.HaltEvent) echoKind {
	info := c.info.WorkflowExecution
	switch {
	case ev.RunID == info.RunID:
		return echoOwn
	case ev.Seq > 0 && (ev.RunID == c.info.OriginalRunID || ev.WorkflowID == info.ID):
		return echoStale
	}
	return echoForeign
}
