package protocol

import (
	"fmt"
	"strings"
)

// Budget is what is left of the budgets a node's next call counts
// against: the node's steps, its cycle's iterations ("Loop 6/8") and the
// execution's calls, with the extensions of earlier resumes. A limit of 0
// is no limit. Model providers' task budgets tell an agent the same, so
// that it can wrap up before it is stopped.
type Budget struct {
	Node string `json:"node"`
	// Steps is how many steps the node took (concurrent calls count once);
	// MaxSteps its limit (interceptor.Options.MaxCallsPerNode, interceptor.NodeOptions.MaxCalls),
	// known once the node was called.
	Steps    int `json:"steps"`
	MaxSteps int `json:"maxSteps,omitempty"`
	// CycleID names the cycle the node belongs to, if any; Iteration and
	// MaxIterations are its "Loop n/m" (interceptor.Options.MaxCycleIterations).
	CycleID       string `json:"cycleId,omitempty"`
	Iteration     int    `json:"iteration,omitempty"`
	MaxIterations int    `json:"maxIterations,omitempty"`
	// TotalCalls is how many guarded calls the execution made;
	// MaxTotalCalls its limit (interceptor.Options.MaxTotalCalls).
	TotalCalls    int `json:"totalCalls"`
	MaxTotalCalls int `json:"maxTotalCalls,omitempty"`
}

// Left returns the fewest steps, iterations or calls any of the limits
// has left, and false when none limits the node.
func (b Budget) Left() (int, bool) {
	left, limited := 0, false
	for _, l := range [][2]int{{b.Steps, b.MaxSteps}, {b.Iteration, b.MaxIterations}, {b.TotalCalls, b.MaxTotalCalls}} {
		if l[1] <= 0 {
			continue
		}
		if r := max(l[1]-l[0], 0); !limited || r < left {
			left, limited = r, true
		}
	}
	return left, limited
}

// String says it as an agent's prompt can: "Loop 6/8, Code 7/10 steps,
// 21/1000 calls".
func (b Budget) String() string {
	var parts []string
	if b.MaxIterations > 0 {
		parts = append(parts, fmt.Sprintf("Loop %d/%d", b.Iteration, b.MaxIterations))
	}
	if b.MaxSteps > 0 {
		parts = append(parts, fmt.Sprintf("%s %d/%d steps", b.Node, b.Steps, b.MaxSteps))
	}
	if b.MaxTotalCalls > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d calls", b.TotalCalls, b.MaxTotalCalls))
	}
	return strings.Join(parts, ", ")
}
