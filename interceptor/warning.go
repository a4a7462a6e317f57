package interceptor

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// Warning is a detector's trip that did not pause (Options.Warnings): the
// loop's calls carry it in their Notice, and a halt that follows lists it.
type Warning struct {
	Detector detect.Detector `json:"detector"`
	Reason   HaltReason      `json:"reason"`
	Message  string          `json:"message"`
	// Directive is a sentence the agent can put into its prompt.
	Directive string `json:"directive"`
	// N is this warning's number for the loop; Of is how many it gets
	// before it halts.
	N  int `json:"n"`
	Of int `json:"of"`
	// Nodes are the loop's nodes: the cycle's members, or the node.
	Nodes   []string `json:"nodes"`
	CycleID string   `json:"cycleId,omitempty"`
	// left is how many calls of the loop's nodes remain before the
	// warning counts as heeded; carried across continue-as-new.
	Left int `json:"left"`
}

// directives are what a warning tells the agent, by reason.
var directives = map[HaltReason]string{
	ReasonStalled:       "You are repeating the same steps and getting the same results. Do not make the same call again with the same input: change your approach.",
	ReasonOscillating:   "You are alternating between the same steps without progress. Stop going back and forth: pick one approach and change it.",
	ReasonRepeatedError: "The same error keeps coming back. Do not retry the same action: read the error and do something different.",
}

// loopKey names the loop a trip is about: its cycle, or its node.
func loopKey(t *detect.Trip) string {
	if t.CycleID != "" {
		return t.CycleID
	}
	return "node:" + t.Node
}

// warnable reports whether trip gets a warning instead of a halt.
func (g *guard) warnable(t *detect.Trip) bool {
	if g.version < versionGuidance || g.cfg.Warnings <= 0 {
		return false
	}
	switch t.Reason {
	case ReasonBudgetExceeded, ReasonUserStop:
		return false
	}
	return g.warned[loopKey(t)] < g.cfg.Warnings
}

// warn issues the loop's next warning: the detector starts over, and the
// loop's calls carry the warning until it trips again or a window of its
// calls goes by without a trip (heeded).
func (g *guard) warn(ctx workflow.Context, t *detect.Trip) {
	key := loopKey(t)
	if g.warned == nil {
		g.warned = map[string]int{}
	}
	g.warned[key]++
	g.warnings++
	nodes := []string{t.Node}
	if t.CycleID != "" {
		for _, c := range g.state.View().Cycles {
			if c.CycleID == t.CycleID {
				nodes = append([]string(nil), c.Nodes...)
			}
		}
	}
	g.warning = &Warning{
		Detector: t.Detector, Reason: t.Reason, Message: t.Message, Directive: directives[t.Reason],
		N: g.warned[key], Of: g.cfg.Warnings, Nodes: nodes, CycleID: t.CycleID,
		Left: g.cfg.Policy.Window * len(nodes),
	}
	g.state.Resume(t, detect.Extension{})
	g.next.GetLogger(ctx).Warn("loopguard: loop warned", "reason", t.Reason, "detector", t.Detector,
		"node", t.Node, "cycleId", t.CycleID, "warning", fmt.Sprintf("%d/%d", g.warned[key], g.cfg.Warnings), "message", t.Message)
	g.next.GetMetricsHandler(ctx).WithTags(map[string]string{
		labelReason:   string(t.Reason),
		labelDetector: string(t.Detector),
	}).Counter(MetricWarnings).Inc(1)
	// The UI's current details show the warning (no command).
	g.showDetails(ctx, fmt.Sprintf("loopguard: warned %d/%d at %s (%s, %s): %s",
		g.warning.N, g.warning.Of, t.Node, t.Reason, t.Detector, t.Message))
	g.history = append(g.history, *g.warning)
	if len(g.history) > maxWarningHistory {
		g.history = g.history[len(g.history)-maxWarningHistory:]
	}
}

// maxWarningHistory bounds the warnings kept for the evidence of a halt.
const maxWarningHistory = 8

// heed counts a call of node against the warning in force: once a window
// of the loop's calls has gone by without another trip, the loop heeded
// it, its count starts over and the notice stops carrying it.
func (g *guard) heed(ctx workflow.Context, node string) {
	w := g.warning
	if w == nil || !slices.Contains(w.Nodes, node) {
		return
	}
	if w.Left--; w.Left > 0 {
		return
	}
	key := w.CycleID
	if key == "" {
		key = "node:" + w.Nodes[0]
	}
	delete(g.warned, key)
	g.warning = nil
	g.showDetails(ctx, "")
	g.next.GetMetricsHandler(ctx).WithTags(map[string]string{labelReason: string(w.Reason)}).Counter(MetricHeeded).Inc(1)
}

// unheeded returns the warnings the loop of trip got before this halt,
// and forgets them: the halt answers them.
func (g *guard) unheeded(t *detect.Trip) []Warning {
	if g.version < versionGuidance {
		return nil
	}
	key := loopKey(t)
	var out []Warning
	kept := g.history[:0]
	for _, w := range g.history {
		k := w.CycleID
		if k == "" {
			k = "node:" + w.Nodes[0]
		}
		if k == key {
			out = append(out, w)
		} else {
			kept = append(kept, w)
		}
	}
	g.history = kept
	delete(g.warned, key)
	if g.warning != nil && (g.warning.CycleID == t.CycleID && t.CycleID != "" || g.warning.CycleID == "" && slices.Contains(g.warning.Nodes, t.Node)) {
		g.warning = nil
	}
	return out
}
