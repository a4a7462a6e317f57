package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/workflows"
)

// policyError is an invalid policy file.
type policyError struct {
	path  string // the file
	field string // JSON path of the field, e.g. "nodes.Verify.maxCalls"; "" for the whole file
	msg   string
}

func (e *policyError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("policy file %s: %s", e.path, e.msg)
	}
	return fmt.Sprintf("policy file %s: %s: %s", e.path, e.field, e.msg)
}

// guardOptions builds the guard's options from the samples' options, the
// policy file (interceptor.ParsePolicy's format, overlaid with
// Options.ApplyPolicy) and the flags, in that order of precedence (flags
// win), and validates them. SupervisorWorkflowID and SearchAttribute come
// from flags and the server, later; the protocol names stay the defaults.
// Errors are *usageError.
func guardOptions(cfg config) (interceptor.Options, error) {
	base := workflows.GuardOptions()
	o := base
	if cfg.policyPath != "" {
		data, err := os.ReadFile(cfg.policyPath)
		if err != nil {
			if u := errors.Unwrap(err); u != nil {
				err = u // the path is said once, by policyError
			}
			return o, &usageError{err: &policyError{path: cfg.policyPath, msg: err.Error()}}
		}
		if err := o.ApplyPolicy(data); err != nil {
			var pe *interceptor.PolicyError
			if errors.As(err, &pe) {
				return o, &usageError{err: &policyError{path: cfg.policyPath, field: pe.Field, msg: pe.Reason}}
			}
			return o, &usageError{err: err}
		}
		// Fields the worker decides itself: the file must not set them.
		const printed = "the worker keeps the default name: the commands it prints use it"
		for _, f := range []struct{ field, got, base, why string }{
			{"supervisorWorkflowID", o.SupervisorWorkflowID, base.SupervisorWorkflowID, "the worker sets it: use --supervisor-id"},
			{"searchAttribute", o.SearchAttribute, base.SearchAttribute, "the worker sets it: use --search-attribute"},
			{"resumeSignal", o.ResumeSignal, base.ResumeSignal, printed},
			{"escalateSignal", o.EscalateSignal, base.EscalateSignal, printed},
			{"haltSignal", o.HaltSignal, base.HaltSignal, printed},
			{"haltedSignal", o.HaltedSignal, base.HaltedSignal, printed},
			{"statusQuery", o.StatusQuery, base.StatusQuery, printed},
			{"resumeUpdate", o.ResumeUpdate, base.ResumeUpdate, printed},
			{"escalateUpdate", o.EscalateUpdate, base.EscalateUpdate, printed},
		} {
			if f.got != f.base {
				return o, &usageError{err: &policyError{path: cfg.policyPath, field: f.field, msg: f.why}}
			}
		}
	}
	if cfg.onHalt != "" {
		o.OnHalt = protocol.OnHalt(cfg.onHalt)
	}
	if cfg.pauseTimeout > 0 {
		o.PauseTimeout = cfg.pauseTimeout
	}
	for _, path := range cfg.operatorKeys {
		k, err := readPublicKey(path)
		if err != nil {
			return o, usagef("--operator-key: %v", err)
		}
		o.OperatorKeys = append(o.OperatorKeys, k)
	}
	if _, err := interceptor.New(o); err != nil {
		var oe *interceptor.OptionError
		if errors.As(err, &oe) {
			if cfg.policyPath != "" {
				return o, &usageError{err: &policyError{path: cfg.policyPath, field: oe.JSONPath(), msg: oe.Reason}}
			}
			return o, usagef("invalid guard option %s: %s", oe.JSONPath(), oe.Reason)
		}
		return o, &usageError{err: err}
	}
	return o, nil
}
