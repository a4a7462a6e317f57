package detect

import "time"

// BudgetKind says what a budget limits, and so the Go type of its Policy
// and Extension fields.
type BudgetKind string

// The budget kinds.
const (
	BudgetCount    BudgetKind = "count"    // int
	BudgetDuration BudgetKind = "duration" // time.Duration (JSON: nanoseconds)
	BudgetCost     BudgetKind = "cost"     // float64
)

// Scope is what a budget, and an Extension of it, applies to.
type Scope string

// The budget scopes.
const (
	ScopeNode      Scope = "node"      // each node (the tripped node, for an Extension)
	ScopeCycle     Scope = "cycle"     // each detected cycle (the tripped cycle)
	ScopeExecution Scope = "execution" // the whole workflow execution
)

// Budget is one row of the budget table: everything the guard, its
// options, the resume payload and the docs need to know about one budget.
// Adding a budget is adding a row to budgetTable (and its fields to Policy
// and Extension).
type Budget struct {
	Detector Detector   // the detector that trips ("node_calls")
	Reason   Reason     // the halt reason (budget_exceeded, or stalled for edge_without_progress)
	Scope    Scope      // what the limit and an extension apply to
	Kind     BudgetKind // count, duration or cost
	Option   string     // the interceptor Options field ("MaxCallsPerNode")
	JSON     string     // the Policy / Extension / policy-file / resume "extend" key ("maxCallsPerNode")
	Default  string     // DefaultPolicy's value, as documented ("10", "0 (off)")
	// ToolCalls is ToolCallPolicy's value, as documented ("150"), when it
	// differs from Default; "" when it is the same.
	ToolCalls string
	Doc       string // what it limits, one line
	Reset     string // what Resume resets when an extension does not raise the limit

	// PolicyField and ExtensionField return a pointer to the row's field:
	// *int for BudgetCount, *time.Duration for BudgetDuration, *float64 for
	// BudgetCost.
	PolicyField    func(*Policy) any
	ExtensionField func(*Extension) any

	// reset clears what the row counts; n and c are the tripped node and
	// cycle, never nil where the row's Scope is theirs (State.reset).
	reset func(s *State, n *node, c *cycle)
}

// Budgets returns the budget table, in documentation order. The slice is a
// copy; the accessor funcs are shared and safe for concurrent use.
func Budgets() []Budget {
	return append([]Budget(nil), budgetTable...)
}

// budgetOf returns the row of detector d, or nil.
func budgetOf(d Detector) *Budget {
	for i := range budgetTable {
		if budgetTable[i].Detector == d {
			return &budgetTable[i]
		}
	}
	return nil
}

// Positive reports whether the row's field of e is positive (an extension
// that raises the limit). NaN is not positive.
func (b Budget) Positive(e *Extension) bool {
	return positiveAt(b.ExtensionField(e))
}

// Set stores the row's value in p from v, converted to the row's kind: an
// int count, nanoseconds for a duration, a float cost. Loaders of JSON
// policy files decode numbers as float64; Set keeps one conversion rule.
func (b Budget) Set(p *Policy, v float64) {
	setAt(b.PolicyField(p), v)
}

// Value returns the row's field of p as a float64 (nanoseconds for a
// duration), for messages and validation.
func (b Budget) Value(p *Policy) float64 {
	return fieldValue(b.PolicyField(p))
}

// ExtensionValue returns the row's field of e as a float64.
func (b Budget) ExtensionValue(e *Extension) float64 {
	return fieldValue(b.ExtensionField(e))
}

func positiveAt(f any) bool {
	switch x := f.(type) {
	case *int:
		return *x > 0
	case *time.Duration:
		return *x > 0
	case *float64:
		return *x > 0
	}
	return false
}

func fieldValue(f any) float64 {
	switch x := f.(type) {
	case *int:
		return float64(*x)
	case *time.Duration:
		return float64(*x)
	case *float64:
		return *x
	}
	return 0
}

func setAt(f any, v float64) {
	switch x := f.(type) {
	case *int:
		*x = int(v)
	case *time.Duration:
		*x = time.Duration(v)
	case *float64:
		*x = v
	}
}

// addAt adds src's value to dst (same kind).
func addAt(dst, src any) {
	switch x := dst.(type) {
	case *int:
		*x += *src.(*int)
	case *time.Duration:
		*x += *src.(*time.Duration)
	case *float64:
		*x += *src.(*float64)
	}
}

// clampAt sets a negative (or NaN) value to 0.
func clampAt(f any) {
	if !positiveAt(f) {
		setAt(f, 0)
	}
}

// budgetTable is the one list of budgets.
var budgetTable = []Budget{
	{
		Detector: DetectorNodeCalls, Reason: ReasonBudgetExceeded, Scope: ScopeNode, Kind: BudgetCount,
		Option: "MaxCallsPerNode", JSON: "maxCallsPerNode", Default: "10", ToolCalls: "150",
		Doc:            "a node's steps (NodePolicy.MaxCalls overrides it per node)",
		Reset:          "the node's steps → 0",
		PolicyField:    func(p *Policy) any { return &p.MaxCallsPerNode },
		ExtensionField: func(e *Extension) any { return &e.MaxCallsPerNode },
		reset:          func(_ *State, n *node, _ *cycle) { n.steps = 0 },
	},
	{
		Detector: DetectorNodeRuntime, Reason: ReasonBudgetExceeded, Scope: ScopeNode, Kind: BudgetDuration,
		Option: "MaxNodeRuntime", JSON: "maxNodeRuntime", Default: "0 (off)",
		Doc:            "workflow time spent in a node's steps (NodePolicy.MaxRuntime overrides it)",
		Reset:          "the node's runtime → 0",
		PolicyField:    func(p *Policy) any { return &p.MaxNodeRuntime },
		ExtensionField: func(e *Extension) any { return &e.MaxNodeRuntime },
		reset:          func(_ *State, n *node, _ *cycle) { n.run = 0 },
	},
	{
		Detector: DetectorTotalCalls, Reason: ReasonBudgetExceeded, Scope: ScopeExecution, Kind: BudgetCount,
		Option: "MaxTotalCalls", JSON: "maxTotalCalls", Default: "1000",
		Doc:            "every guarded call, fan-out and exempt nodes included",
		Reset:          "total calls → 0",
		PolicyField:    func(p *Policy) any { return &p.MaxTotalCalls },
		ExtensionField: func(e *Extension) any { return &e.MaxTotalCalls },
		reset:          func(s *State, _ *node, _ *cycle) { s.totalCalls = 0 },
	},
	{
		Detector: DetectorTotalCost, Reason: ReasonBudgetExceeded, Scope: ScopeExecution, Kind: BudgetCost,
		Option: "MaxCost", JSON: "maxCost", Default: "0 (off)",
		Doc:            "cost read by Rules.CostField, already over the limit",
		Reset:          "total cost → 0",
		PolicyField:    func(p *Policy) any { return &p.MaxCost },
		ExtensionField: func(e *Extension) any { return &e.MaxCost },
		reset:          func(s *State, _ *node, _ *cycle) { s.totalCost = 0 },
	},
	{
		Detector: DetectorCycleIterations, Reason: ReasonBudgetExceeded, Scope: ScopeCycle, Kind: BudgetCount,
		Option: "MaxCycleIterations", JSON: "maxCycleIterations", Default: "8", ToolCalls: "150",
		Doc:            "iterations of one cycle (taking an anchor edge would exceed it)",
		Reset:          "the cycle's iteration → 1",
		PolicyField:    func(p *Policy) any { return &p.MaxCycleIterations },
		ExtensionField: func(e *Extension) any { return &e.MaxCycleIterations },
		reset:          func(_ *State, _ *node, c *cycle) { c.iter = 1 },
	},
	{
		Detector: DetectorCycleRuntime, Reason: ReasonBudgetExceeded, Scope: ScopeCycle, Kind: BudgetDuration,
		Option: "MaxCycleRuntime", JSON: "maxCycleRuntime", Default: "0 (off)",
		Doc:            "workflow time since the cycle's anchor first ran",
		Reset:          "the cycle starts again at its next step",
		PolicyField:    func(p *Policy) any { return &p.MaxCycleRuntime },
		ExtensionField: func(e *Extension) any { return &e.MaxCycleRuntime },
		reset:          func(_ *State, _ *node, c *cycle) { c.hasStart, c.restart = false, true },
	},
	{
		Detector: DetectorCycleCost, Reason: ReasonBudgetExceeded, Scope: ScopeCycle, Kind: BudgetCost,
		Option: "MaxCycleCost", JSON: "maxCycleCost", Default: "0 (off)",
		Doc:            "cost of the cycle's steps since it formed",
		Reset:          "the cycle's cost → 0",
		PolicyField:    func(p *Policy) any { return &p.MaxCycleCost },
		ExtensionField: func(e *Extension) any { return &e.MaxCycleCost },
		reset:          func(_ *State, _ *node, c *cycle) { c.cost = 0 },
	},
	{
		Detector: DetectorEdgeWithoutProgress, Reason: ReasonStalled, Scope: ScopeNode, Kind: BudgetCount,
		Option: "MaxEdgeWithoutProgress", JSON: "maxEdgeWithoutProgress", Default: "5", ToolCalls: "30",
		Doc:            "times an edge A→B is taken without progress at B (scope: B)",
		Reset:          "the counters of the edges into the node → 0",
		PolicyField:    func(p *Policy) any { return &p.MaxEdgeWithoutProgress },
		ExtensionField: func(e *Extension) any { return &e.MaxEdgeWithoutProgress },
		reset: func(s *State, n *node, _ *cycle) {
			for _, e := range n.in {
				s.edges[e].count = 0
			}
		},
	},
}
