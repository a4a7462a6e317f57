package interceptor

import (
	"errors"
	"fmt"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"go.temporal.io/sdk/temporal"
)

// EscalatedErrorType is the ApplicationError type of the error a paused call
// returns when a human (or the fail policy, or a pause timeout) escalates.
const EscalatedErrorType = "LoopEscalated"

// Escalation is the detail carried by a LoopEscalated error.
type Escalation struct {
	Reason string             `json:"reason"`
	By     string             `json:"by,omitempty"`
	Halt   protocol.HaltEvent `json:"halt"`
}

// newEscalatedError builds the non-retryable LoopEscalated application error.
func newEscalatedError(e Escalation) error {
	msg := fmt.Sprintf("loop escalated (%s at %s): %s", e.Halt.HaltReason, e.Halt.Node, e.Reason)
	return temporal.NewNonRetryableApplicationError(msg, EscalatedErrorType, nil, e)
}

// IsEscalated reports whether err is, or wraps, a LoopEscalated error: the
// error a guarded call returns when its halted loop was escalated. It also
// holds for the failure of a child workflow that returned such an error.
func IsEscalated(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == EscalatedErrorType
}

// EscalationFrom returns the Escalation carried by a LoopEscalated error.
func EscalationFrom(err error) (Escalation, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != EscalatedErrorType {
		return Escalation{}, false
	}
	var e Escalation
	if !app.HasDetails() || app.Details(&e) != nil {
		return Escalation{}, false
	}
	return e, true
}

// OptionError reports an invalid Options field. New returns it; use
// errors.As to read the field.
type OptionError struct {
	Field  string // the Options field, e.g. "MaxCycleIterations" or "Nodes[verify].MaxCalls"
	Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("loopguard: invalid option %s: %s", e.Field, e.Reason)
}

// InputError reports human input (a signal or update payload) the guard
// refused. Update validators return it; rejected signals are recorded in
// Status.LastRejected with the same reason.
type InputError struct {
	Name   string // signal or update name
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("loopguard: %s rejected: %s", e.Name, e.Reason)
}
