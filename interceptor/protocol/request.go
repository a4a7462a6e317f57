package protocol

import (
	"encoding/json"
	"reflect"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/internal/strictjson"
)

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

// UnmarshalJSON decodes a resume, escalate or halt payload strictly.
func (r *ResumeRequest) UnmarshalJSON(data []byte) error {
	type plain ResumeRequest // the same fields, without this method
	p := plain(*r)
	if err := strictjson.Decode("", data, reflect.ValueOf(&p).Elem()); err != nil {
		return err
	}
	*r = ResumeRequest(p)
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads: a Go client that sends
// a ResumeRequest with an Extend duration sends "10m0s", not nanoseconds.
func (r ResumeRequest) MarshalJSON() ([]byte, error) {
	type plain ResumeRequest
	return json.Marshal(strictjson.Encode(reflect.ValueOf(plain(r))))
}

// ActionHalt is the action of a signed halt request (Answer.Action): stop
// a running workflow at its next guarded call. It is never a Decision's.
const ActionHalt Action = "halt"
