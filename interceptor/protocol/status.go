package protocol

import (
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// State is the guard's state as reported by the status query.
type State string

// The guard states.
const (
	StateRunning   State = "running"   // no halt in force
	StateHalted    State = "halted"    // a guarded call is paused, waiting for a human
	StateEscalated State = "escalated" // the last halt was escalated
	StateDisabled  State = "disabled"  // the execution started before the guard was installed
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
	// KeyID names the interceptor.OperatorKey that signed the answer, when operators'
	// keys are set (interceptor.Options.OperatorKeys).
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
	// oldest first, when operators' keys are set (interceptor.Options.OperatorKeys):
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
	// Warning is the warning in force (interceptor.Options.Warnings), and Warnings
	// counts those issued in this run.
	Warning  *Warning `json:"warning,omitempty"`
	Warnings int      `json:"warnings,omitempty"`
	// Names are the signals and updates that answer the guard, as its
	// Options name them: `worker answer` sends under them.
	Names AnswerNames `json:"names"`
}
