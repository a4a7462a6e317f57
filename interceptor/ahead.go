package interceptor

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"
)

// Budget is what is left of the budgets a node's next call counts
// against: the node's steps, its cycle's iterations ("Loop 6/8") and the
// execution's calls, with the extensions of earlier resumes. A limit of 0
// is no limit. Model providers' task budgets tell an agent the same, so
// that it can wrap up before it is stopped.
type Budget struct {
	Node string `json:"node"`
	// Steps is how many steps the node took (concurrent calls count once);
	// MaxSteps its limit (Options.MaxCallsPerNode, NodeOptions.MaxCalls),
	// known once the node was called.
	Steps    int `json:"steps"`
	MaxSteps int `json:"maxSteps,omitempty"`
	// CycleID names the cycle the node belongs to, if any; Iteration and
	// MaxIterations are its "Loop n/m" (Options.MaxCycleIterations).
	CycleID       string `json:"cycleId,omitempty"`
	Iteration     int    `json:"iteration,omitempty"`
	MaxIterations int    `json:"maxIterations,omitempty"`
	// TotalCalls is how many guarded calls the execution made;
	// MaxTotalCalls its limit (Options.MaxTotalCalls).
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

// NoticeFor returns, in workflow code, what the guard has to tell the next
// guarded call of node (the activity or child workflow type, or the name
// Options.NodeName gives it): the warning and the guidance in force for
// its loop, which that call's notice header will carry, and the budget it
// has left (Notice.Budget, which no header carries). A workflow that keeps
// the conversation itself and builds its model's prompt can heed them
// without any activity importing the guard.
//
// It reads the guard's memory as of its last look, the workflow's last
// guarded call or wait: it makes no command and changes nothing, so it is
// deterministic and can be called anywhere, as often as needed (a query
// handler included). A warning a detector issues at the next call itself
// is in force from that call on: the call after it sees it. Repeats are
// counted only for calls (the header). It returns false when the workflow
// is not guarded.
func NoticeFor(ctx workflow.Context, node string) (Notice, bool) {
	g, _ := ctx.Value(guardKey{}).(*guard)
	if g == nil || !g.active {
		return Notice{}, false
	}
	n, _ := g.inForce(node)
	if n.Warning != nil && g.pause.heeds(node, g.state.NextStep(node), g.state.NewsSinceBarrier) {
		// The call ends the warning's window: the guard counts it as
		// heeded before the call, whose header then carries no warning.
		n.Warning = nil
	}
	if n.Warning != nil {
		// A copy: the guard's warning may change in place.
		w := *n.Warning
		w.Nodes = slices.Clone(w.Nodes)
		n.Warning = &w
	}
	b := g.budget(node)
	n.Budget = &b
	return n, true
}

// budget reads the budgets of node from the detector state.
func (g *guard) budget(node string) Budget {
	v := g.state.View()
	b := Budget{Node: node, TotalCalls: v.TotalCalls, MaxTotalCalls: v.MaxTotalCalls}
	for _, nv := range v.Nodes {
		if nv.Node == node {
			b.Steps, b.MaxSteps = nv.Steps, nv.MaxCalls
		}
	}
	for _, c := range v.Cycles {
		if slices.Contains(c.Nodes, node) {
			b.CycleID, b.Iteration, b.MaxIterations = c.CycleID, c.Iteration, c.MaxIterations
		}
	}
	return b
}
