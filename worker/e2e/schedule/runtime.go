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
// profile's, with the runtime budgets when the plan has Runtime, the
// Warnings and budgets of its Liveness, and a pause timeout that escalates
// when its long pause ends by one.
func (p Plan) Options() interceptor.Options {
	o := Profiles[p.Profile]()
	if p.Runtime {
		o = WithRuntimeBudget(o)
	}
	if p.Liveness != nil {
		o = WithLiveness(o, p.Liveness.Warnings)
	}
	if p.LongPause == LongPauseTimeout {
		o.PauseTimeout, o.OnPauseTimeout = LongPauseDelay, interceptor.TimeoutEscalate
	}
	return o
}

// LivenessBudget is what WithLiveness raises the call budgets to: more
// than any plan makes, so that a stuck loop is halted by the detectors
// that read repetition, after its warnings, and not first by a budget
// (which warns nobody, and would hide a loop the detectors never halt).
const LivenessBudget = 5000

// WithLiveness returns o with warnings as its Warnings and the call
// budgets (MaxCallsPerNode, MaxCycleIterations, MaxTotalCalls) at
// LivenessBudget.
func WithLiveness(o interceptor.Options, warnings int) interceptor.Options {
	o.Warnings = warnings
	o.MaxCallsPerNode, o.MaxCycleIterations, o.MaxTotalCalls = LivenessBudget, LivenessBudget, LivenessBudget
	return o
}

// LongPauseDelay is how long the driver waits before it ends a plan's
// long pause (LongPause), and the pause timeout of a plan whose long
// pause ends by it: as long as a slow handler sleeps, twice the longest
// runtime budget, so that a guard charging the pause halts the loop's next
// call with a runtime its own time cannot explain.
const LongPauseDelay = HandlerSlowSleep
