package interceptor

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"
)

// selectWorkflows combines Options.Workflows and Options.GuardWorkflow into
// the one predicate setup consults for new executions. A nil result guards
// every workflow. The names are copied and sorted once, at New: the
// predicate only reads them, so executions share nothing mutable.
func selectWorkflows(names []string, guard func(*workflow.Info) bool) (func(*workflow.Info) bool, error) {
	if len(names) == 0 {
		return guard, nil
	}
	for i, n := range names {
		if strings.TrimSpace(n) == "" || strings.TrimSpace(n) != n {
			return nil, &OptionError{Field: fmt.Sprintf("Workflows[%d]", i), Reason: fmt.Sprintf("must be a workflow type name without surrounding spaces, got %q", n)}
		}
		// Type names travel in protobuf, which carries only UTF-8: such a
		// name could never match.
		if err := validText(fmt.Sprintf("Workflows[%d]", i), n); err != nil {
			return nil, err
		}
	}
	types := slices.Clone(names)
	slices.Sort(types)
	types = slices.Compact(types)
	return func(info *workflow.Info) bool {
		if _, ok := slices.BinarySearch(types, info.WorkflowType.Name); !ok {
			return false
		}
		return guard == nil || guard(info)
	}, nil
}

// CheckWorkflows reports each workflow type opts.Workflows names that is
// not among registered: the workflow functions a worker registers (as
// worker.RegisterWorkflow takes them) or their type names (for
// RegisterWorkflowWithOptions' Name). The guard cannot know what a worker
// registers, and a name that matches no type guards nothing, silently: a
// typo ("toolAgent" for ToolAgent) turns the guard off. Call it where the
// worker registers its workflows and log its error loudly (the worker of
// this repository does, and testsuite.Run fails a test with it). The error
// names each type, suggesting a registered name that differs only in case.
// With Workflows empty (every workflow guarded) it returns nil.
func CheckWorkflows(opts Options, registered ...any) error {
	if len(opts.Workflows) == 0 {
		return nil
	}
	known := make([]string, 0, len(registered))
	for _, r := range registered {
		name, err := WorkflowTypeName(r)
		if err != nil {
			return err
		}
		known = append(known, name)
	}
	var errs []error
	for i, n := range opts.Workflows {
		if slices.Contains(known, n) {
			continue
		}
		reason := fmt.Sprintf("names %q, which is not registered (registered: %s): its executions would not be guarded", n, strings.Join(known, ", "))
		for _, k := range known {
			if strings.EqualFold(k, n) {
				reason = fmt.Sprintf("names %q, which is not registered: did you mean %q? Its executions would not be guarded", n, k)
				break
			}
		}
		errs = append(errs, &OptionError{Field: fmt.Sprintf("Workflows[%d]", i), Reason: reason})
	}
	return errors.Join(errs...)
}

// WorkflowTypeName returns the workflow type name the SDK gives wf when a
// worker registers it: a string is the name itself; a function is named
// as worker.RegisterWorkflow names it (the function's name without its
// package or receiver).
func WorkflowTypeName(wf any) (string, error) {
	if name, ok := wf.(string); ok {
		return name, nil
	}
	v := reflect.ValueOf(wf)
	if !v.IsValid() || v.Kind() != reflect.Func {
		return "", fmt.Errorf("loopguard: a workflow is a function or a type name, got %T", wf)
	}
	full := runtime.FuncForPC(v.Pointer()).Name()
	return strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm"), nil
}

// warnNearMiss logs, for an execution Options.Workflows leaves unguarded,
// a name of it that differs from the workflow's type only in case: the
// typo that would otherwise turn the guard off without a word. It only
// logs (replay-safe), so it changes no command.
func (g *guard) warnNearMiss(ctx workflow.Context) {
	typ := g.info.WorkflowType.Name
	for _, n := range g.hooks.workflows {
		if n != typ && strings.EqualFold(n, typ) {
			g.next.GetLogger(ctx).Warn("loopguard: this workflow is not guarded: Options.Workflows names a type that differs from it only in case",
				"WorkflowType", typ, "Workflows", n)
			return
		}
	}
}
