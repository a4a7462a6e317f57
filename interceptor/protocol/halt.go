package protocol

import (
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// OnHalt is what the guard does when a detector trips.
type OnHalt string

// The halt policies.
const (
	// OnHaltPause (the default) pauses the workflow at the guarded call that
	// would continue the loop until a human resumes or escalates.
	OnHaltPause OnHalt = "pause"
	// OnHaltFail escalates at once: the call returns a LoopEscalated error.
	OnHaltFail OnHalt = "fail"
	// OnHaltObserve records, signals, logs and counts halts but never
	// blocks: a shadow mode for tuning thresholds on live traffic.
	OnHaltObserve OnHalt = "observe"
)

// HaltReason is why a loop was halted: one of the Reason constants.
type HaltReason = detect.Reason

// The halt reasons, with the seed's string values.
const (
	ReasonBudgetExceeded = detect.ReasonBudgetExceeded
	ReasonStalled        = detect.ReasonStalled
	ReasonOscillating    = detect.ReasonOscillating
	ReasonRepeatedError  = detect.ReasonRepeatedError
	ReasonUserStop       = detect.ReasonUserStop
)

// Evidence is the bounded record behind a halt: recent output hashes, error
// signatures, progress values, metrics and transitions, oldest first.
type Evidence = detect.Evidence

// HaltEvent is the payload of the loop.halted signal and the halt reported by
// the status query. Its first four fields are the seed's.
type HaltEvent struct {
	CycleID          string     `json:"cycleId"`
	HaltReason       HaltReason `json:"haltReason"`
	Evidence         Evidence   `json:"evidence"`
	SuggestedActions []string   `json:"suggestedActions"`

	Detector      detect.Detector `json:"detector"`
	Message       string          `json:"message"`
	Node          string          `json:"node,omitempty"`
	Iteration     int             `json:"iteration,omitempty"`
	MaxIterations int             `json:"maxIterations,omitempty"`
	// WorkflowTime is the workflow clock (workflow.Now) at the halt.
	WorkflowTime time.Time `json:"workflowTime"`
	WorkflowID   string    `json:"workflowId"`
	RunID        string    `json:"runId"`
	WorkflowType string    `json:"workflowType"`
	// Seq numbers the halts of an execution from 1.
	Seq int `json:"seq"`
	// Observed is true when the guard runs with OnHalt: observe and did not
	// pause the workflow.
	Observed bool `json:"observed,omitempty"`
	// Warnings are the warnings the loop got before this halt and did not
	// heed (interceptor.Options.Warnings).
	Warnings []Warning `json:"warnings,omitempty"`
	// Loop is the loop's identity (detect.Trip.Loop):
	// the name of its anchor node, which a detour through a new call
	// keeps. Warnings and halts of one loop share it; CycleID may change
	// as the loop's cycle grows.
	Loop string `json:"loop,omitempty"`
}
