package detect

import (
	"strconv"
	"strings"
)

// DefaultPolicy returns the documented default thresholds (see the package
// doc's table). Cost, runtime and cycle-runtime budgets are off by default.
func DefaultPolicy() Policy {
	return Policy{
		MaxCallsPerNode:        10,
		MaxNodeRuntime:         0,
		MaxTotalCalls:          1000,
		MaxCost:                0,
		MaxCycleIterations:     8,
		MaxCycleRuntime:        0,
		MaxCycleCost:           0,
		MaxEdgeWithoutProgress: 5,
		RepeatThreshold:        3,
		ErrorRepeatThreshold:   3,
		StallIterations:        3,
		NoImproveIterations:    3,
		OscillationPeriods:     2,
		MaxOscillationPeriod:   3,
		Window:                 8,
		MaxNodes:               64,
	}
}

// ToolCallPolicy returns DefaultPolicy with the budgets of the tool-call
// grain, for LLM↔tool loops where one guarded call is one model call or one
// tool call rather than a whole agent turn (the Budget table's ToolCalls
// column): 150 steps per node and 150 iterations per cycle, so that a
// 100-step run is never halted by a budget, and 30 transitions without
// progress. Measured on the real corpus's progressing runs (up to 183
// calls, median 43): at most 92 steps of one node, 92 iterations of one
// cycle, 14 transitions without progress (docs/detection.md). The
// detectors are the same.
func ToolCallPolicy() Policy {
	p := DefaultPolicy()
	for _, b := range budgetTable {
		if v, ok := b.toolCallValue(); ok {
			b.Set(&p, v)
		}
	}
	return p
}

// toolCallValue reads the row's ToolCalls column: its leading number.
func (b Budget) toolCallValue() (float64, bool) {
	f := strings.Fields(b.ToolCalls)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// MaxWindow is the longest Policy.Window the State keeps: a longer one is
// cut to it. interceptor.New refuses a Window (and a threshold) above it,
// so that no option is cut silently.
const MaxWindow = maxWindow

// Bounds the State never exceeds whatever the Policy says.
const (
	maxWindow   = 256  // history entries per node and evidence list
	maxNodesCap = 1024 // distinct tracked nodes (plus OverflowNode)
	maxNameLen  = 200  // bytes of a node name, an error signature, an evidence string
	maxRawLen   = 64   // bytes of Observation.ProgressRaw kept
)

// limits is the sanitised form of a Policy: every disabled rule is 0, every
// threshold is usable, the window holds what the detectors need.
type limits struct {
	// budget holds the policy's budgets, one field per row of the budget
	// table, negative values 0 (off).
	budget Extension

	repeat     int // 0: identical_output off
	errRepeat  int // 0: repeated_error off
	stall      int // 0: unchanged_progress off
	noImprove  int // 0: no_improvement off
	oscPeriods int // 0: both oscillation detectors off
	maxOscP    int

	window   int
	maxNodes int
}

// newLimits sanitises p: negative limits are 0 (off), repetition thresholds
// below 2 are off (one observation is no repetition), the window is raised
// to what the enabled detectors need and capped at maxWindow.
func newLimits(p Policy) limits {
	l := limits{
		budget:     budgetsOf(&p),
		repeat:     atLeast2(p.RepeatThreshold),
		errRepeat:  atLeast2(p.ErrorRepeatThreshold),
		stall:      atLeast2(p.StallIterations),
		noImprove:  posInt(p.NoImproveIterations),
		oscPeriods: atLeast2(p.OscillationPeriods),
		maxOscP:    atLeast2(p.MaxOscillationPeriod),
		window:     posInt(p.Window),
		maxNodes:   p.MaxNodes,
	}
	if l.oscPeriods == 0 || l.maxOscP == 0 {
		l.oscPeriods, l.maxOscP = 0, 0
	}
	need := max(l.repeat, l.errRepeat, l.stall, 2)
	if l.oscPeriods > 0 {
		need = max(need, min(l.oscPeriods*l.maxOscP, maxWindow))
	}
	l.window = min(max(l.window, need), maxWindow)
	// Thresholds the window cannot hold can never be reached.
	if l.repeat > l.window {
		l.repeat = 0
	}
	if l.errRepeat > l.window {
		l.errRepeat = 0
	}
	if l.stall > l.window {
		l.stall = 0
	}
	if l.oscPeriods > 0 {
		l.maxOscP = min(l.maxOscP, l.window/l.oscPeriods)
		if l.maxOscP < 2 {
			l.oscPeriods, l.maxOscP = 0, 0
		}
	}
	if l.maxNodes <= 0 {
		l.maxNodes = DefaultPolicy().MaxNodes
	}
	l.maxNodes = min(l.maxNodes, maxNodesCap)
	return l
}

// budgetsOf copies p's budgets into an Extension-shaped value, negative
// ones 0.
func budgetsOf(p *Policy) Extension {
	var e Extension
	for _, b := range budgetTable {
		dst := b.ExtensionField(&e)
		setAt(dst, b.Value(p))
		clampAt(dst)
	}
	return e
}

func posInt(v int) int {
	return max(v, 0)
}

func atLeast2(v int) int {
	if v < 2 {
		return 0
	}
	return v
}
