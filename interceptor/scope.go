package interceptor

import (
	"fmt"
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
