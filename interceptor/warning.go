package interceptor

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// key names the warning's loop.
func keyOf(w protocol.Warning) string { return warningKey(w.Loop, w.CycleID, w.Node) }

// warningKey names a loop: its identity (loop, which a detour keeps), else
// its cycle, or its node.
func warningKey(loop, cycleID, node string) string {
	switch {
	case loop != "":
		return "loop:" + loop
	case cycleID != "":
		return cycleID
	}
	return "node:" + node
}

// directives are what a warning tells the agent, by reason.
var directives = map[protocol.HaltReason]string{
	protocol.ReasonStalled:       "You are repeating the same steps and getting the same results. Do not make the same call again with the same input: change your approach.",
	protocol.ReasonOscillating:   "You are alternating between the same steps without progress. Stop going back and forth: pick one approach and change it.",
	protocol.ReasonRepeatedError: "The same error keeps coming back. Do not retry the same action: read the error and do something different.",
}

// warnable reports whether trip gets a warning instead of a halt.
func (c *core) warnable(t *detect.Trip) bool {
	if c.cfg.Warnings <= 0 {
		return false
	}
	switch t.Reason {
	case protocol.ReasonBudgetExceeded, protocol.ReasonUserStop:
		return false
	}
	return c.pause.warnings(warningKey(t.Loop, t.CycleID, t.Node)) < c.cfg.Warnings
}

// warn tells of the loop's warning w, which the core issued for trip t
// (the detector started over, and the loop's calls carry the warning
// until it trips again or a window of its steps goes by without a trip:
// heeded): the log, the metric and the current details.
func (g *guard) warn(ctx workflow.Context, t *detect.Trip, w protocol.Warning) {
	g.next.GetLogger(ctx).Warn("loopguard: loop warned", "reason", t.Reason, "detector", t.Detector,
		"node", t.Node, "cycleId", t.CycleID, "warning", fmt.Sprintf("%d/%d", w.N, w.Of), "message", t.Message)
	g.next.GetMetricsHandler(ctx).WithTags(map[string]string{
		labelReason:   string(t.Reason),
		labelDetector: string(t.Detector),
	}).Counter(MetricWarnings).Inc(1)
	// The UI's current details show the warning (no command).
	g.showDetails(ctx, fmt.Sprintf("loopguard: warned %d/%d at %s (%s, %s): %s",
		w.N, w.Of, t.Node, t.Reason, t.Detector, t.Message))
}

// issueWarning puts the loop's next warning for trip t in force and
// starts the detector over: the warning's state change, without the log,
// metric and details warn adds (the analysis of past histories runs it).
func (c *core) issueWarning(t *detect.Trip) protocol.Warning {
	p := &c.pause
	nodes := c.loopNodes(t.CycleID, t.Node)
	w := protocol.Warning{
		Detector: t.Detector, Reason: t.Reason, Message: t.Message, Directive: directives[t.Reason],
		N: p.warnings(warningKey(t.Loop, t.CycleID, t.Node)) + 1, Of: c.cfg.Warnings,
		Node: t.Node, Nodes: nodes, CycleID: t.CycleID, Loop: t.Loop,
	}
	p.warn(w, c.heededAfter(t, nodes))
	c.state.Resume(t, detect.Extension{})
	return w
}

// heededAfter is how many steps of the loop's nodes (the detectors' unit,
// in which Trip.Period and Trip.Window are measured) must go by without
// the loop tripping again before its warning counts as heeded. It is
// measured in the loop's own periods: Window rounds of the loop (Trip.Period steps each), or the tripped detector's own window and
// one round more when that is longer (the edge budget's), so that a loop
// of any period that did not change halts once its warnings are spent. A
// trip with no period (none measured) is given Window calls per node.
func (c *core) heededAfter(t *detect.Trip, nodes []string) int {
	if t.Period > 0 {
		return max(c.cfg.Policy.Window*t.Period, t.Window+t.Period)
	}
	return c.cfg.Policy.Window * len(nodes)
}

// heed counts a call of node, of detector step step, against the warning
// in force (core.called); when the loop has heeded it, the notice stops
// carrying it, and the metric counts it.
func (g *guard) heed(ctx workflow.Context, node string, step int) {
	if w := g.called(node, step); w != nil {
		g.showDetails(ctx, "")
		g.next.GetMetricsHandler(ctx).WithTags(map[string]string{labelReason: string(w.Reason)}).Counter(MetricHeeded).Inc(1)
	}
}

// endHeeded counts the warning in force as heeded when the workflow
// completes before a window of the loop's calls went by: the loop ended
// without a halt after its warning (a metric, no command).
func (g *guard) endHeeded(ctx workflow.Context) {
	if w := g.pause.warning(); w != nil {
		g.next.GetMetricsHandler(ctx).WithTags(map[string]string{labelReason: string(w.Reason)}).Counter(MetricHeeded).Inc(1)
	}
}

// called counts a call of node, of detector step step, admitted and about
// to be made, against the warning in force, and returns the warning
// when this call ends its window: the loop heeded it.
func (c *core) called(node string, step int) *protocol.Warning {
	return c.pause.heed(node, step, c.state.NewsSinceBarrier)
}

// loopNodes are the nodes of a loop: the members of cycle cycleID, or
// node alone.
func (c *core) loopNodes(cycleID, node string) []string {
	if cycleID != "" {
		for _, cy := range c.state.View().Cycles {
			if cy.CycleID == cycleID {
				return append([]string(nil), cy.Nodes...)
			}
		}
	}
	return []string{node}
}
