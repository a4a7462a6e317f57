package watch

import (
	"slices"
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// A closed run stays listed (the last maxClosedListed of them) long after
// its reader is gone, so what it holds is cut to what an operator needs
// to find the halt: the full halt, evidence and message, is in the
// history and in `worker analyze`. A listed halt is a few fixed fields
// and three string headers (the detector a constant, the action a
// byte, the pause's request
// id empty when it is the one derived from the halt), under 100 B.

// closedRun is one closed run of Status.Executions.
type closedRun struct {
	workflowID, runID, workflowType string
	warnings, problems              int
	unstartedTaskFailed             []int64
	resetTo                         int64
	halts                           []listedHalt
}

// listedHalt is a HaltStatus without its event.
type listedHalt struct {
	call, seq, callsBefore int32
	answered               bool
	action                 uint8 // index in actions
	detector               detect.Detector
	node                   string
	pausedBy               string // "" for PauseRequestID of the halt
	trippedAt, pausedAt    int64  // Unix ns; 0: none
}

// closedLine cuts a closed run's status line to a closedRun.
func closedLine(es ExecutionStatus) closedRun {
	c := closedRun{
		workflowID: es.WorkflowID, runID: es.RunID, workflowType: es.WorkflowType,
		warnings: es.Warnings, problems: es.Problems,
		unstartedTaskFailed: es.UnstartedTaskFailed, resetTo: es.ResetTo,
		halts: make([]listedHalt, len(es.Halts)),
	}
	for i, h := range es.Halts {
		l := listedHalt{
			call: int32(h.Call), seq: int32(h.Seq), callsBefore: int32(h.CallsBefore), answered: h.Answered,
			detector: detect.Detector(h.Detector), node: h.Node, action: actionCode(h.Action), pausedBy: h.PausedBy,
			trippedAt: unixNano(h.TrippedAt), pausedAt: unixNano(h.PausedAt),
		}
		if l.pausedBy == PauseRequestID(es.WorkflowID, es.RunID, h.Seq) {
			l.pausedBy = ""
		}
		c.halts[i] = l
	}
	return c
}

// status is the run's line of Status again; each halt's event holds what
// the listing keeps.
func (c *closedRun) status() ExecutionStatus {
	es := ExecutionStatus{
		WorkflowID: c.workflowID, RunID: c.runID, WorkflowType: c.workflowType,
		Warnings: c.warnings, Problems: c.problems, ResetTo: c.resetTo, Closed: true,
		UnstartedTaskFailed: c.unstartedTaskFailed,
		Halts:               make([]HaltStatus, len(c.halts)),
	}
	for i, l := range c.halts {
		h := HaltStatus{
			Call: int(l.call), Seq: int(l.seq), Detector: string(l.detector), Node: l.node,
			Answered: l.answered, PausedBy: l.pausedBy, Action: actions[l.action], CallsBefore: int(l.callsBefore),
			TrippedAt: fromUnixNano(l.trippedAt), PausedAt: fromUnixNano(l.pausedAt),
			Event: protocol.HaltEvent{
				Seq: int(l.seq), Detector: l.detector, Node: l.node,
				WorkflowID: c.workflowID, RunID: c.runID, WorkflowType: c.workflowType,
			},
		}
		if l.answered && h.PausedBy == "" {
			h.PausedBy = PauseRequestID(c.workflowID, c.runID, h.Seq)
		}
		es.Halts[i] = h
	}
	return es
}

// unixNano is t in Unix ns, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNano is unixNano's inverse, in UTC as the history's times are.
func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// actions are the actions a halt is listed with (HaltStatus.Action).
var actions = []string{"", "pause", "paused by another", "superseded", ActionEscaped,
	FallbackSignal.String(), FallbackCancel.String(), FallbackObserve.String()}

// actionCode is action's index in actions (0, no action, for one not
// there: TestClosedLine lists every action the watcher takes).
func actionCode(action string) uint8 {
	return uint8(max(slices.Index(actions, action), 0))
}
