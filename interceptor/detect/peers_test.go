package detect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The peers' own rules, as small reference functions over a trace, so that
// TestPeers can report them side by side with ours on the same traces. A
// trace's first node plays the agent: its calls are actions, the other
// nodes' calls observations (a failed call an error observation). Each
// returns the detection index (the call that would not run), or -1.

// peerEvent is one call as a peer compares it: node and exact content,
// with the event ids peers ignore left out.
type peerEvent struct {
	action bool
	failed bool
	id     string
}

func peerEvents(calls []corpusCall) []peerEvent {
	ev := make([]peerEvent, len(calls))
	for i, c := range calls {
		ev[i] = peerEvent{action: c.Node == calls[0].Node, failed: c.Error != ""}
		body := c.Error
		if c.Error == "" {
			body = string(stripIDs(c.Output))
		}
		ev[i].id = c.Node + "\x00" + body
	}
	return ev
}

// stripIDs drops the keys OpenHands' comparison ignores (event ids and
// causes) and re-encodes with sorted keys, as Cline's signature does.
func stripIDs(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return raw
	}
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"id", "cause", "command_id"} {
				delete(x, k)
			}
			for k, c := range x {
				x[k] = strip(c)
			}
		case []any:
			for k, c := range x {
				x[k] = strip(c)
			}
		}
		return v
	}
	b, err := json.Marshal(strip(v))
	if err != nil {
		return raw
	}
	return b
}

// openHandsRule is OpenHands' StuckDetector (openhands/controller/stuck.py):
// 4 identical action/observation pairs; 3 identical actions each answered
// by an error; 3 identical agent actions in a row with no observation
// between (monologue); an A/B pattern over 6 action/observation pairs;
// 10 identical consecutive observations of one kind (context window).
func openHandsRule(calls []corpusCall) int {
	ev := peerEvents(calls)
	for i := range ev {
		h := ev[:i+1]
		var acts, obs []peerEvent
		for k := len(h) - 1; k >= 0; k-- {
			if h[k].action {
				acts = append(acts, h[k])
			} else {
				obs = append(obs, h[k])
			}
		}
		same := func(x []peerEvent, n int) bool {
			if len(x) < n {
				return false
			}
			for _, e := range x[1:n] {
				if e.id != x[0].id {
					return false
				}
			}
			return true
		}
		stuck := same(acts, 4) && same(obs, 4)
		if !stuck && same(acts, 3) && len(obs) >= 3 && obs[0].failed && obs[1].failed && obs[2].failed {
			stuck = true
		}
		if !stuck && len(h) >= 3 {
			last := h[len(h)-3:]
			stuck = last[0].action && last[1].action && last[2].action && last[0].id == last[1].id && last[1].id == last[2].id
		}
		if !stuck && len(acts) >= 6 && len(obs) >= 6 {
			stuck = acts[0].id == acts[2].id && acts[0].id == acts[4].id && acts[1].id == acts[3].id && acts[1].id == acts[5].id &&
				obs[0].id == obs[2].id && obs[0].id == obs[4].id && obs[1].id == obs[3].id && obs[1].id == obs[5].id
		}
		if !stuck && len(h) >= 10 {
			last := h[len(h)-10:]
			stuck = !last[0].action
			for _, e := range last[1:] {
				stuck = stuck && e.id == last[0].id
			}
		}
		if stuck {
			return i + 1
		}
	}
	return -1
}

// clineRule is Cline's LoopDetectionTracker (default thresholds: soft
// warning at 3, hard escalation at 5 identical consecutive tool calls).
// The tool calls are the agent's actions (every call, in a trace of one
// node); it returns the index where the count reaches threshold.
func clineRule(calls []corpusCall, threshold int) int {
	ev := peerEvents(calls)
	last, count := "", 0
	for i, e := range ev {
		if !e.action {
			continue
		}
		if e.id == last {
			count++
		} else {
			last, count = e.id, 1
		}
		if count >= threshold {
			return i + 1
		}
	}
	return -1
}

// TestPeers reports, per source, ours and the peers' rules on the same
// traces with the budgets raised out of the way (loops labelled
// budget_exceeded are left out: no stall rule can catch them, by label).
// It holds ours to the targets: on the ported suites every stuck trace
// caught, no progressing one halted, median detection latency at most 3
// calls after onset; on the original corpus (default budgets) every loop
// caught and no false halt.
func TestPeers(t *testing.T) {
	traces := loadCorpus(t)
	type rule struct {
		name string
		run  func(tr *corpusTrace) int
	}
	ours := func(tr *corpusTrace) int {
		p, err := tr.policy()
		require.NoError(t, err)
		raiseBudgets(&p)
		at, _ := replay(p, tr.Calls)
		return at
	}
	rules := []rule{
		{"loopguard", ours},
		{"OpenHands StuckDetector", func(tr *corpusTrace) int { return openHandsRule(tr.Calls) }},
		{"Cline warn (3 identical)", func(tr *corpusTrace) int { return clineRule(tr.Calls, 3) }},
		{"Cline escalate (5 identical)", func(tr *corpusTrace) int { return clineRule(tr.Calls, 5) }},
	}
	groups := []struct {
		name    string
		sources []string
		ported  bool
	}{
		{"openhands (test_is_stuck.py)", []string{"openhands"}, true},
		{"cline (loop-detection.test.ts)", []string{"cline"}, true},
		{"swe-agent (3 trajectories + noisy loops)", []string{"swe-agent"}, true},
		{"waiting and acks (temporal, loopguard)", []string{"temporal", "loopguard"}, true},
		{"original corpus (seed000-004, openhands, cline)", corpusSources, false},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-48s %-30s %-14s %-18s %s\n", "source (budgets raised)", "rule", "stuck caught", "not-stuck halted", "median latency")
	var all corpusStats
	for _, g := range groups {
		var sel []corpusTrace
		budgetLoops := 0
		for _, tr := range traces {
			if tr.Ported != g.ported || !slices.Contains(g.sources, tr.Source) {
				continue
			}
			if tr.Loop && tr.WantReason == ReasonBudgetExceeded {
				budgetLoops++
				continue
			}
			sel = append(sel, tr)
		}
		for _, r := range rules {
			var st corpusStats
			for k := range sel {
				tr := &sel[k]
				at := r.run(tr)
				var trip *Trip
				if at >= 0 {
					trip = &Trip{Reason: ReasonStalled}
				}
				st.add(tr, at, trip, false)
			}
			fmt.Fprintf(&report, "%-48s %-30s %-14s %-18s %s\n", g.name, r.name,
				fmt.Sprintf("%d/%d", st.caught, st.loops), fmt.Sprintf("%d/%d", st.falseHalts, st.progressing), median(st.latencies))
			if r.name == rules[0].name && g.ported {
				all.loops += st.loops
				all.caught += st.caught
				all.progressing += st.progressing
				all.falseHalts += st.falseHalts
				all.latencies = append(all.latencies, st.latencies...)
				assert.Equal(t, st.loops, st.caught, "%s: every stuck trace caught", g.name)
				assert.Zero(t, st.falseHalts, "%s: no progressing trace halted", g.name)
			}
		}
		if budgetLoops > 0 {
			fmt.Fprintf(&report, "%-48s (%d loop(s) labelled budget_exceeded left out)\n", g.name, budgetLoops)
		}
	}
	fmt.Fprintf(&report, "all ported suites: %s\n", &all)
	lat := slices.Clone(all.latencies)
	slices.Sort(lat)
	require.NotEmpty(t, lat)
	assert.LessOrEqual(t, float64(lat[(len(lat)-1)/2]+lat[len(lat)/2])/2, 3.0, "median detection latency on the ported suites")

	// The original corpus with default budgets: every verdict kept.
	var st corpusStats
	for k := range traces {
		tr := &traces[k]
		if tr.Ported {
			continue
		}
		p, err := tr.policy()
		require.NoError(t, err)
		at, trip := replay(p, tr.Calls)
		st.add(tr, at, trip, false)
	}
	m, _ := meanMax(st.latencies)
	fmt.Fprintf(&report, "original corpus, default budgets: %s, mean latency %.2f\n", &st, m)
	assert.Equal(t, st.loops, st.caught, "every loop caught")
	assert.Zero(t, st.falseHalts, "no false halt")
	t.Log(report.String())
	if testing.Verbose() {
		fmt.Print(report.String())
	}
}
