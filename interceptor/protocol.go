package interceptor

import (
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// Default names of the guard's signals, query and updates. Each can be
// renamed in Options; the names in force are pinned per execution.
const (
	// DefaultResumeSignal lets a paused call proceed. Payload: ResumeRequest.
	DefaultResumeSignal = "resume"
	// DefaultEscalateSignal makes a paused call return a LoopEscalated
	// error. Payload: EscalateRequest.
	DefaultEscalateSignal = "escalate"
	// DefaultHaltSignal asks a running workflow to stop at its next guarded
	// call with reason user_stop. Payload: HaltRequest.
	DefaultHaltSignal = "halt"
	// DefaultHaltedSignal is the guard's own signal, raised to the halted
	// workflow (so it shows in its history) and to the supervisor, if any.
	// Payload: HaltEvent.
	DefaultHaltedSignal = "loop.halted"
	// DefaultStatusQuery answers a Status.
	DefaultStatusQuery = "loop.status"
	// DefaultResumeUpdate and DefaultEscalateUpdate are the synchronous
	// forms of the resume and escalate signals: their validators reject a
	// request when nothing is halted or the payload is malformed.
	DefaultResumeUpdate   = "resume"
	DefaultEscalateUpdate = "escalate"
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

// State is the guard's state as reported by the status query.
type State string

// The guard states.
const (
	StateRunning   State = "running"   // no halt in force
	StateHalted    State = "halted"    // a guarded call is paused, waiting for a human
	StateEscalated State = "escalated" // the last halt was escalated
	StateDisabled  State = "disabled"  // the execution started before the guard was installed
)

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
	// heed (Options.Warnings).
	Warnings []Warning `json:"warnings,omitempty"`
	// Loop is the loop's identity (detect.Trip.Loop):
	// the name of its anchor node, which a detour through a new call
	// keeps. Warnings and halts of one loop share it; CycleID may change
	// as the loop's cycle grows.
	Loop string `json:"loop,omitempty"`
}

// ResumeRequest is the payload of the resume signal and update. Every field
// is optional; an empty payload (or none) resumes with the tripped counter
// reset. Unknown fields are rejected.
type ResumeRequest struct {
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
	// Extend raises limits instead of resetting the tripped counter, e.g.
	// {"maxCycleIterations":4} allows four more iterations of the cycle.
	Extend *detect.Extension `json:"extend,omitempty"`
	// Guidance is text for the agent (at most MaxGuidanceBytes): every
	// later call of the halted loop's nodes carries it in its Notice, until
	// the loop halts again.
	Guidance string `json:"guidance,omitempty"`
}

// EscalateRequest is the payload of the escalate signal and update.
type EscalateRequest struct {
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// HaltRequest is the payload of the halt signal (human → running workflow).
type HaltRequest struct {
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// Action is what a decision does with a halt.
type Action string

// The decisions on a halt.
const (
	ActionResume   Action = "resume"   // the paused call goes ahead
	ActionEscalate Action = "escalate" // the paused call returns a LoopEscalated error
	// ActionCancel records that the workflow was canceled while paused: the
	// paused call returned the cancellation, nothing was escalated.
	ActionCancel Action = "cancel"
)

// Decision is the answer to a resume or escalate update, and the record of
// the last decision in Status.
type Decision struct {
	Action Action `json:"action"`
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
	// HaltSeq is the HaltEvent.Seq the decision answered.
	HaltSeq int `json:"haltSeq"`
	// Guidance is the resume's guidance for the agent, if any.
	Guidance string `json:"guidance,omitempty"`
	// KeyID names the OperatorKey that signed the answer, when operators'
	// keys are set (Options.OperatorKeys).
	KeyID string `json:"keyId,omitempty"`
}

// Rejection records human input the guard refused, and why.
type Rejection struct {
	Name   string `json:"name"` // signal or update name
	Reason string `json:"reason"`
	// Payload is the start of the rejected payload, for the operator's eyes.
	Payload string `json:"payload,omitempty"`
	// WorkflowTime is the workflow clock when the input was refused.
	WorkflowTime time.Time `json:"workflowTime"`
	// PassedOn is true when the refused signal went on to the workflow:
	// it may be the workflow's own signal of that name.
	PassedOn bool `json:"passedOn,omitempty"`
}

// Status is the answer of the loop.status query.
type Status struct {
	State State `json:"state"`
	// Halt is the halt in force (or the last escalated one); null when running.
	Halt *HaltEvent `json:"halt"`
	// Halts counts the halts of the execution, observed ones included.
	Halts        int                `json:"halts"`
	Cycles       []detect.CycleView `json:"cycles"`
	Nodes        []detect.NodeView  `json:"nodes"`
	TotalCalls   int                `json:"totalCalls"`
	Transitions  []string           `json:"transitions,omitempty"`
	LastDecision *Decision          `json:"lastDecision,omitempty"`
	LastRejected *Rejection         `json:"lastRejected,omitempty"`
	// Refused lists the last 8 refused resume, escalate and halt signals,
	// oldest first, when operators' keys are set (Options.OperatorKeys):
	// an answer without a good signature shows here with the reason. A
	// refused update is not recorded anywhere: its caller gets the reason.
	Refused []Rejection `json:"refused,omitempty"`
	Policy  OnHalt      `json:"onHalt"`
	// Handling is true while the workflow's halt handler decides the halt
	// in force; a human may still answer it.
	Handling bool `json:"handling,omitempty"`
	// Stopping is true when a human's halt was taken and waits for the next
	// guarded call (behind a detector's trip that halts first, if any).
	Stopping bool `json:"stopping,omitempty"`
	// Guidance is the human's guidance in force: what the calls of the
	// loop's nodes carry in their Notice.
	Guidance *Guidance `json:"guidance,omitempty"`
	// Warning is the warning in force (Options.Warnings), and Warnings
	// counts those issued in this run.
	Warning  *Warning `json:"warning,omitempty"`
	Warnings int      `json:"warnings,omitempty"`
	// Names are the signals and updates that answer the guard, as its
	// Options name them: `worker answer` sends under them.
	Names AnswerNames `json:"names"`
}

// AnswerNames are the names a guard takes answers under.
type AnswerNames struct {
	ResumeSignal   string `json:"resumeSignal"`
	EscalateSignal string `json:"escalateSignal"`
	HaltSignal     string `json:"haltSignal"`
	ResumeUpdate   string `json:"resumeUpdate"`
	EscalateUpdate string `json:"escalateUpdate"`
}

// For is the signal (signal set) or update that carries action a ("" for
// none: halt is a signal only).
func (n AnswerNames) For(a Action, signal bool) string {
	names := map[Action][2]string{
		ActionResume:   {n.ResumeUpdate, n.ResumeSignal},
		ActionEscalate: {n.EscalateUpdate, n.EscalateSignal},
		ActionHalt:     {"", n.HaltSignal},
	}[a]
	if signal {
		return names[1]
	}
	return names[0]
}
