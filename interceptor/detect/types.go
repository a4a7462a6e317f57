package detect

import (
	"time"
)

// Reason is why a loop was halted. The values are the seed's (loop safety
// document 000) and appear verbatim in the loop.halted payload.
type Reason string

// The halt reasons.
const (
	ReasonBudgetExceeded Reason = "budget_exceeded"
	ReasonStalled        Reason = "stalled"
	ReasonOscillating    Reason = "oscillating"
	ReasonRepeatedError  Reason = "repeated_error"
	ReasonUserStop       Reason = "user_stop"
)

// Detector names the rule that tripped. It is finer than Reason: several
// detectors share the reason "stalled" or "budget_exceeded".
type Detector string

// The detectors.
const (
	DetectorNodeCalls             Detector = "node_calls"             // budget: steps of one node
	DetectorNodeRuntime           Detector = "node_runtime"           // budget: workflow time spent in one node
	DetectorTotalCalls            Detector = "total_calls"            // budget: guarded calls in the execution
	DetectorTotalCost             Detector = "total_cost"             // budget: cost of the execution
	DetectorCycleIterations       Detector = "cycle_iterations"       // budget: iterations of one cycle
	DetectorCycleRuntime          Detector = "cycle_runtime"          // budget: workflow time since a cycle started
	DetectorCycleCost             Detector = "cycle_cost"             // budget: cost of the nodes of one cycle
	DetectorEdgeWithoutProgress   Detector = "edge_without_progress"  // stalled: A→B taken too often without progress at B
	DetectorIdenticalOutput       Detector = "identical_output"       // stalled: same output N times in a row
	DetectorUnchangedProgress     Detector = "unchanged_progress"     // stalled: declared progress value unchanged M times
	DetectorNoImprovement         Detector = "no_improvement"         // stalled: declared metric not improving for K steps
	DetectorOutputOscillation     Detector = "output_oscillation"     // oscillating: a node's outputs are periodic (A/B/A/B, A/B/C/A/B/C)
	DetectorTransitionOscillation Detector = "transition_oscillation" // oscillating: transitions periodic with no progress
	DetectorRepeatedError         Detector = "repeated_error"         // repeated_error: same error signature N times in a row
	DetectorUserStop              Detector = "user_stop"              // user_stop: a human asked to stop
)

// Policy is the plain-data form of the guard's thresholds. A zero or
// negative limit disables that rule (the interceptor fills in the documented
// defaults before it builds a State). Policy is JSON-serialisable because the
// interceptor pins it in each execution's history.
type Policy struct {
	MaxCallsPerNode        int           `json:"maxCallsPerNode,omitempty"`
	MaxNodeRuntime         time.Duration `json:"maxNodeRuntime,omitempty"`
	MaxTotalCalls          int           `json:"maxTotalCalls,omitempty"`
	MaxCost                float64       `json:"maxCost,omitempty"`
	MaxCycleIterations     int           `json:"maxCycleIterations,omitempty"`
	MaxCycleRuntime        time.Duration `json:"maxCycleRuntime,omitempty"`
	MaxCycleCost           float64       `json:"maxCycleCost,omitempty"`
	MaxEdgeWithoutProgress int           `json:"maxEdgeWithoutProgress,omitempty"`
	RepeatThreshold        int           `json:"repeatThreshold,omitempty"`      // identical outputs in a row
	ErrorRepeatThreshold   int           `json:"errorRepeatThreshold,omitempty"` // identical error signatures in a row
	StallIterations        int           `json:"stallIterations,omitempty"`      // steps with an unchanged progress value
	NoImproveIterations    int           `json:"noImproveIterations,omitempty"`  // steps without a better metric
	OscillationPeriods     int           `json:"oscillationPeriods,omitempty"`   // full periods before "oscillating"
	MaxOscillationPeriod   int           `json:"maxOscillationPeriod,omitempty"` // longest period looked for (>= 2)
	Window                 int           `json:"window,omitempty"`               // entries kept per node history and evidence list; >= every threshold
	MaxNodes               int           `json:"maxNodes,omitempty"`             // distinct nodes tracked; more fold into OverflowNode

	// IgnoreFields are JSON field paths removed from every node's result
	// before hashing, in addition to each node's own Rules.IgnoreFields.
	IgnoreFields []string `json:"ignoreFields,omitempty"`
	// Nodes holds per-node overrides, keyed by node name. Looked up, never
	// iterated in map order.
	Nodes map[string]NodePolicy `json:"nodes,omitempty"`
	// Graph is the optional declared transition graph: its edges count for
	// cycle detection from the first call, before they are observed.
	Graph []Edge `json:"graph,omitempty"`
}

// NodePolicy overrides the policy for one node. Zero fields inherit.
type NodePolicy struct {
	MaxCalls   int           `json:"maxCalls,omitempty"`
	MaxRuntime time.Duration `json:"maxRuntime,omitempty"`
	// Exempt nodes (pollers, heartbeats, reporting) are never counted as
	// steps, transitions or cycle members, and never halt but by
	// MaxTotalCalls, which counts every call.
	Exempt bool `json:"exempt,omitempty"`
	// HigherIsBetter flips the direction of the declared metric (default:
	// lower is better, like a failing-test count).
	HigherIsBetter bool `json:"higherIsBetter,omitempty"`
	// Rules extracts signatures from results (see Extract).
	Rules Rules `json:"rules,omitempty"`
}

// Rules say how to read a node's result: which JSON fields to ignore before
// hashing, where the progress signal, the metric and the cost are. Paths are
// dot-separated object keys with optional numeric array indexes
// ("report.failing", "items.0.id").
type Rules struct {
	IgnoreFields   []string `json:"ignoreFields,omitempty"`
	ProgressFields []string `json:"progressFields,omitempty"`
	MetricField    string   `json:"metricField,omitempty"`
	CostField      string   `json:"costField,omitempty"`
}

// Edge is a transition between two nodes.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// OverflowNode is the name every node past Policy.MaxNodes is folded into,
// so that state stays bounded whatever names a workflow invents.
const OverflowNode = "~other"

// Observation is what one completed call showed. It is plain data: the
// interceptor builds it with Extract and ErrorSignature.
type Observation struct {
	Failed   bool   `json:"failed,omitempty"`
	Output   uint64 `json:"output,omitempty"`   // hash of the normalised result (when !Failed)
	ErrorSig string `json:"errorSig,omitempty"` // normalised error signature (when Failed)
	// ErrorHash is ErrorHash of the error (when Failed), which the
	// detectors compare; 0: compare ErrorSig.
	ErrorHash uint64 `json:"errorHash,omitempty"`

	HasProgress bool    `json:"hasProgress,omitempty"`
	Progress    uint64  `json:"progress,omitempty"` // hash of the declared progress fields
	ProgressRaw string  `json:"progressRaw,omitempty"`
	HasMetric   bool    `json:"hasMetric,omitempty"`
	Metric      float64 `json:"metric,omitempty"`
	Cost        float64 `json:"cost,omitempty"`

	// Shape is Output with every number masked and Count the sum of the
	// numbers Output kept: a result whose Shape repeats and
	// whose Count moved by one is a counter ("attempt 2", "attempt 3").
	Shape uint64 `json:"shape,omitempty"`
	Count int64  `json:"count,omitempty"`
	// Action is Output without the commentary fields ("thought", "why",
	// "reason", ...) and with non-integer numbers (measurements: timings,
	// costs, scores) masked, 0 when the result has neither.
	Action uint64 `json:"action,omitempty"`
	// Fields are the result's numeric leaves outside arrays:
	// the candidates for volatile fields (ids, epochs, counters) the State
	// learns per node.
	Fields []Field `json:"fields,omitempty"`
}

// Field is one numeric leaf of a result: a hash of its path and its
// contribution to Observation.Output (the Output is the sum of its leaves'
// contributions, so a learnt volatile field can be taken out).
type Field struct {
	Path uint32 `json:"p"`
	Sum  uint64 `json:"s"`
	// Num is the number's value, for the order of its changes
	//.
	Num float64 `json:"n,omitempty"`
}

// Extension raises limits when a human resumes a halted loop. Node-scoped
// fields apply to the tripped node, cycle-scoped ones to the tripped cycle.
type Extension struct {
	MaxCallsPerNode        int           `json:"maxCallsPerNode,omitempty"`
	MaxNodeRuntime         time.Duration `json:"maxNodeRuntime,omitempty"`
	MaxTotalCalls          int           `json:"maxTotalCalls,omitempty"`
	MaxCost                float64       `json:"maxCost,omitempty"`
	MaxCycleIterations     int           `json:"maxCycleIterations,omitempty"`
	MaxCycleRuntime        time.Duration `json:"maxCycleRuntime,omitempty"`
	MaxCycleCost           float64       `json:"maxCycleCost,omitempty"`
	MaxEdgeWithoutProgress int           `json:"maxEdgeWithoutProgress,omitempty"`
}

// Trip is a detector's verdict: the loop must halt.
type Trip struct {
	Reason        Reason    `json:"reason"`
	Detector      Detector  `json:"detector"`
	Node          string    `json:"node,omitempty"`
	CycleID       string    `json:"cycleId,omitempty"`
	Iteration     int       `json:"iteration,omitempty"`
	MaxIterations int       `json:"maxIterations,omitempty"`
	Message       string    `json:"message"`
	Evidence      Evidence  `json:"evidence"`
	At            time.Time `json:"at"`

	// Loop, Period and Window name and measure the loop
	// that tripped. Loop is its identity: the name of its anchor, the
	// member of the tripped node's cycle that ran first (the node itself
	// outside any cycle). A detour through a call the loop never made
	// before joins the cycle but leaves its anchor, so the identity
	// holds. Period is the length of one round of the loop in steps (the
	// repeating stretch's period; the cycle's size for detectors that
	// read no sequence), and Window how many steps of the loop the
	// tripped detector needs, after the loop starts over, to trip again
	// if nothing changes.
	Loop   string `json:"loop,omitempty"`
	Period int    `json:"period,omitempty"`
	Window int    `json:"window,omitempty"`
}

// Evidence is the bounded record behind a halt: each list holds at most
// Policy.Window entries, oldest first, and each string is short.
type Evidence struct {
	OutputHashes    []string  `json:"outputHashes,omitempty"`
	ErrorSignatures []string  `json:"errorSignatures,omitempty"`
	ProgressValues  []string  `json:"progressValues,omitempty"`
	Metrics         []float64 `json:"metrics,omitempty"`
	Transitions     []string  `json:"transitions,omitempty"`

	// why the repeated results counted as the same, and what
	// the comparison ignored.
	Same    string   `json:"same,omitempty"`
	Ignored []string `json:"ignored,omitempty"`
}

// StepRef identifies a step returned by State.Begin, to be passed to End.
type StepRef struct {
	Node int // index of the node
	Seq  int // step sequence number
}

// View is a read-only summary of the state for status queries.
type View struct {
	TotalCalls  int         `json:"totalCalls"`
	TotalSteps  int         `json:"totalSteps"`
	TotalCost   float64     `json:"totalCost,omitempty"`
	Nodes       []NodeView  `json:"nodes"`
	Cycles      []CycleView `json:"cycles"`
	Transitions []string    `json:"transitions,omitempty"`
	// MaxTotalCalls is the limit on TotalCalls, extensions included (0:
	// none).
	MaxTotalCalls int `json:"maxTotalCalls,omitempty"`
}

// NodeView is one node in a View.
type NodeView struct {
	Node     string        `json:"node"`
	Calls    int           `json:"calls"`
	Steps    int           `json:"steps"`
	MaxCalls int           `json:"maxCalls,omitempty"`
	Runtime  time.Duration `json:"runtime"`
	Cost     float64       `json:"cost,omitempty"`
	InFlight int           `json:"inFlight,omitempty"`
	Exempt   bool          `json:"exempt,omitempty"`
}

// CycleView is one detected cycle in a View.
type CycleView struct {
	CycleID       string   `json:"cycleId"`
	Nodes         []string `json:"nodes"`
	Edges         []string `json:"edges"`
	Anchor        string   `json:"anchor"`
	Iteration     int      `json:"iteration"`
	MaxIterations int      `json:"maxIterations"`
	Cost          float64  `json:"cost,omitempty"`
}
