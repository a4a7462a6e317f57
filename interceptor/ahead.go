package interceptor

import (
	"slices"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"go.temporal.io/sdk/workflow"
)

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
func NoticeFor(ctx workflow.Context, node string) (protocol.Notice, bool) {
	g, _ := ctx.Value(guardKey{}).(*guard)
	if g == nil || !g.active {
		return protocol.Notice{}, false
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
func (g *guard) budget(node string) protocol.Budget {
	v := g.state.View()
	b := protocol.Budget{Node: node, TotalCalls: v.TotalCalls, MaxTotalCalls: v.MaxTotalCalls}
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
