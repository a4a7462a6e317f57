package schedule_test

import (
	"testing"

	"github.com/loopguard/loopguard/worker/e2e/schedule"
	"github.com/stretchr/testify/assert"
)

// TestNoProfileHasARuntimeBudget keeps docs/schedule-test.md's word about
// issue 22's invariant "a halt handler's time is never charged to a runtime
// budget": no profile sets MaxNodeRuntime, MaxCycleRuntime or a node's
// MaxRuntime (their defaults are 0: no limit), so no plan can halt on
// node_runtime or cycle_runtime, and the schedule test has nothing to check
// it on. The invariant is checked at unit level, where workflow time is
// the test's: interceptor's TestHandlerTimeIsNotTheLoops (a 30-minute
// handler under 10-minute runtime budgets halts once, not twice). A
// profile that adds a runtime budget must add the check here first.
func TestNoProfileHasARuntimeBudget(t *testing.T) {
	for name, f := range schedule.Profiles {
		o := f()
		assert.Zero(t, o.MaxNodeRuntime, "%s: MaxNodeRuntime", name)
		assert.Zero(t, o.MaxCycleRuntime, "%s: MaxCycleRuntime", name)
		for node, n := range o.Nodes {
			assert.Zero(t, n.MaxRuntime, "%s: Nodes[%s].MaxRuntime", name, node)
		}
	}
}
