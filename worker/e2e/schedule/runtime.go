package schedule

import (
	"maps"
	"time"

	"github.com/loopguard/loopguard/interceptor"
)

// The runtime budgets a plan with Runtime runs under (feature runtime), on
// top of its profile: every one the guard has, so that a halt handler's
// time can be charged to none of them (issue 22). They are a few seconds
// of workflow time, which on the real server is wall time: short enough
// that a handler of kind slow outlasts them, long enough that most loops
// finish within them even on a loaded machine (a loop that does not is
// halted on node_runtime or cycle_runtime, which is correct, and checked).
const (
	RuntimeBudget     = 3 * time.Second // MaxCycleRuntime and MaxNodeRuntime
	RuntimeBudgetNode = "Code"          // the node with its own MaxRuntime
	RuntimeBudgetOwn  = 2 * time.Second // its NodeOptions.MaxRuntime
)

// HandlerSlowSleep is how long a handler of kind slow sleeps before it
// resumes: twice the longest runtime budget, so that a guard charging the
// handler's time to the loop halts the loop's next call at once, with a
// runtime the loop's own time cannot explain.
const HandlerSlowSleep = 2 * RuntimeBudget

// WithRuntimeBudget returns o with the runtime budgets set; o's Nodes map
// is copied, not changed.
func WithRuntimeBudget(o interceptor.Options) interceptor.Options {
	o.MaxCycleRuntime, o.MaxNodeRuntime = RuntimeBudget, RuntimeBudget
	nodes := maps.Clone(o.Nodes)
	if nodes == nil {
		nodes = map[string]interceptor.NodeOptions{}
	}
	n := nodes[RuntimeBudgetNode]
	n.MaxRuntime = RuntimeBudgetOwn
	nodes[RuntimeBudgetNode] = n
	o.Nodes = nodes
	return o
}

// Options are the guard options the plan's worker runs with: its
// profile's, with the runtime budgets when the plan has Runtime.
func (p Plan) Options() interceptor.Options {
	o := Profiles[p.Profile]()
	if p.Runtime {
		o = WithRuntimeBudget(o)
	}
	return o
}
