package detect

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realTrace is one labelled real agent run of testdata/real (see its
// README.md for the sources, the labelling rule and the split).
type realTrace struct {
	Name     string     `json:"name"`
	Source   string     `json:"source"`
	System   string     `json:"system"`
	Model    string     `json:"model"`
	Origin   string     `json:"origin"`
	Loop     bool       `json:"loop"`
	Onset    int        `json:"onset"`
	Disputed bool       `json:"disputed"`
	Why      string     `json:"why"`
	Half     string     `json:"half"`
	Steps    []realStep `json:"steps"`
}

// realStep is a user input, a tool call with its observation, or model
// text with no tool call.
type realStep struct {
	Kind        string `json:"kind"`
	Text        string `json:"text,omitempty"`
	Tool        string `json:"tool,omitempty"`
	Action      string `json:"action,omitempty"`
	Observation string `json:"observation,omitempty"`
	Error       bool   `json:"error,omitempty"`
}

var realSources = []string{"autocoderover-results", "nebius-swe-agent-trajectories", "openhands-outputs"}

// loadRealCorpus reads and checks every trace of testdata/real.
func loadRealCorpus(t testing.TB) []realTrace {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "real", "*.json.gz"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	traces := make([]realTrace, 0, len(files))
	for _, f := range files {
		tr := readRealTrace(t, f)
		require.Equal(t, strings.TrimSuffix(filepath.Base(f), ".json.gz"), tr.Name, f)
		require.Contains(t, realSources, tr.Source, f)
		require.NotEmpty(t, tr.System, f)
		require.NotEmpty(t, tr.Model, f)
		require.NotEmpty(t, tr.Origin, f)
		require.NotEmpty(t, tr.Why, f)
		require.Contains(t, []string{"tune", "check"}, tr.Half, f)
		require.NotEmpty(t, tr.Steps, f)
		if tr.Loop {
			require.True(t, tr.Onset >= 0 && tr.Onset < len(tr.Steps), "%s: onset %d of %d steps", f, tr.Onset, len(tr.Steps))
			require.NotEqual(t, "user", tr.Steps[tr.Onset].Kind, "%s: a loop does not start with outside input", f)
		} else {
			require.Zero(t, tr.Onset, "%s: a progressing trace has no onset", f)
		}
		for i, s := range tr.Steps {
			switch s.Kind {
			case "user", "llm":
				require.True(t, s.Tool == "" && s.Action == "" && s.Observation == "" && !s.Error, "%s: step %d: %s step with tool fields", f, i, s.Kind)
			case "tool":
				require.NotEmpty(t, s.Tool, "%s: step %d", f, i)
				require.Empty(t, s.Text, "%s: step %d", f, i)
				require.LessOrEqual(t, utf8.RuneCountInString(s.Action), 2000, "%s: step %d: action longer than 2,000 characters", f, i)
			default:
				t.Fatalf("%s: step %d: unknown kind %q", f, i, s.Kind)
			}
		}
		traces = append(traces, tr)
	}
	return traces
}

func readRealTrace(t testing.TB, path string) realTrace {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err, path)
	dec := json.NewDecoder(zr)
	dec.DisallowUnknownFields()
	var tr realTrace
	require.NoError(t, dec.Decode(&tr), path)
	return tr
}

// realCalls maps a trace's steps to guarded calls, the way an interceptor
// would see an LLM↔tool agent loop, and returns the index of the call
// where the loop's onset step begins (0 for a progressing trace). This is
// the one place to change when detection is tuned against the corpus:
//
//   - a user step is outside input (State.Input), as a signal or an update
//     carrying the message would be;
//   - a tool step is two calls: node "llm" with the action text as output
//     (the model's turn that emitted the call), then node = the tool name
//     with the observation as output, or, when the step failed, with the
//     observation as the call's error;
//   - an llm step (model text, no tool call) is one call of node "llm".
func realCalls(tr *realTrace) (calls []corpusCall, onset int) {
	str := func(s string) json.RawMessage {
		b, _ := json.Marshal(s) // a string always marshals
		return b
	}
	for i, s := range tr.Steps {
		if tr.Loop && i == tr.Onset {
			onset = len(calls)
		}
		switch s.Kind {
		case "user":
			calls = append(calls, corpusCall{Input: true})
		case "llm":
			calls = append(calls, corpusCall{Node: "llm", Output: str(s.Text)})
		case "tool":
			calls = append(calls, corpusCall{Node: "llm", Output: str(s.Action)})
			if s.Error {
				msg := s.Observation
				if msg == "" {
					msg = "(empty)"
				}
				calls = append(calls, corpusCall{Node: s.Tool, Error: msg})
			} else {
				calls = append(calls, corpusCall{Node: s.Tool, Output: str(s.Observation)})
			}
		}
	}
	return calls, onset
}

// openHandsFrom runs openHandsRule from the first agent call on: the
// reference treats a trace's first node as the agent, and a real trace
// starts with the task (node "user"). OpenHands' own detector likewise
// looks only at the history after the user's task.
//
// The reference sees outside input as an event of its own, a user
// message unlike any other.
func openHandsFrom(calls []corpusCall) int {
	calls = slices.Clone(calls)
	for i, c := range calls {
		if c.Input {
			calls[i] = corpusCall{Node: "user", Output: json.RawMessage(fmt.Sprintf("%q", fmt.Sprint("user message ", i)))}
		}
	}
	k := slices.IndexFunc(calls, func(c corpusCall) bool { return c.Node == "llm" })
	if k < 0 {
		return -1
	}
	at := openHandsRule(calls[k:])
	if at < 0 {
		return -1
	}
	return at + k
}

// realKey groups the report: source, system and model.
func realKey(tr *realTrace) string {
	sys, _, _ := strings.Cut(tr.System, " (")
	return fmt.Sprintf("%s: %s / %s", tr.Source, sys, tr.Model)
}

// TestRealCorpus checks every labelled real trace and reports, per source
// and per half, the counts and the rules side by side (budgets raised, so
// that only the detectors can halt, unless the row names budgets). It
// fails when generation 3 misses its targets on either half.
//
//	go test ./interceptor/detect/ -run RealCorpus -v
func TestRealCorpus(t *testing.T) {
	traces := loadRealCorpus(t)
	require.GreaterOrEqual(t, len(traces), 150)

	type counts struct{ traces, loops, progressing, disputed int }
	byKey := map[string]map[string]*counts{}
	systems := map[string]bool{}
	for i := range traces {
		tr := &traces[i]
		systems[tr.System+"|"+tr.Model] = true
		k := realKey(tr)
		if byKey[k] == nil {
			byKey[k] = map[string]*counts{"tune": {}, "check": {}}
		}
		for _, h := range []string{tr.Half, "all"} {
			c := byKey[k][h]
			if c == nil {
				c = &counts{}
				byKey[k][h] = c
			}
			c.traces++
			if tr.Loop {
				c.loops++
			} else {
				c.progressing++
			}
			if tr.Disputed {
				c.disputed++
			}
		}
	}
	require.GreaterOrEqual(t, len(systems), 4, "at least 4 agent systems or models")

	var report strings.Builder
	fmt.Fprintf(&report, "\n%-80s %-6s %7s %6s %12s %9s\n", "source: system / model", "half", "traces", "loops", "progressing", "disputed")
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	total := map[string]*counts{"tune": {}, "check": {}}
	for _, k := range keys {
		for _, h := range []string{"tune", "check"} {
			c := byKey[k][h]
			fmt.Fprintf(&report, "%-80s %-6s %7d %6d %12d %9d\n", k, h, c.traces, c.loops, c.progressing, c.disputed)
			tc := total[h]
			tc.traces += c.traces
			tc.loops += c.loops
			tc.progressing += c.progressing
			tc.disputed += c.disputed
		}
	}
	for _, h := range []string{"tune", "check"} {
		c := total[h]
		fmt.Fprintf(&report, "%-80s %-6s %7d %6d %12d %9d\n", "all", h, c.traces, c.loops, c.progressing, c.disputed)
		require.NotZero(t, c.loops, "half %s has loops", h)
		require.NotZero(t, c.progressing, "half %s has progressing runs", h)
	}

	// Baselines, per half, with budgets out of the way.
	type rule struct {
		name string
		run  func(calls []corpusCall) int
	}
	rules := []rule{
		{"OpenHands StuckDetector", openHandsFrom},
		{"loopguard", func(calls []corpusCall) int {
			p := DefaultPolicy()
			raiseBudgets(&p)
			at, _ := replay(p, calls)
			return at
		}},
		// With budgets on: the zero Options (agent-turn budgets) and the
		// tool-call grain recommended for LLM↔tool loops.
		{"loopguard, zero Options' budgets", func(calls []corpusCall) int {
			at, _ := replay(DefaultPolicy(), calls)
			return at
		}},
		{"loopguard, GrainToolCall budgets", func(calls []corpusCall) int {
			at, _ := replay(ToolCallPolicy(), calls)
			return at
		}},
	}
	results := map[string]corpusStats{}
	fmt.Fprintf(&report, "\n%-42s %-6s %-14s %-24s %-22s %s\n", "rule (budgets raised unless named)", "half", "loops caught", "progressing runs halted", "loops halted early", "median latency (calls after onset)")
	for _, r := range rules {
		for _, h := range []string{"tune", "check"} {
			st, early := scoreReal(traces, r.run, func(tr *realTrace) bool { return tr.Half == h })
			fmt.Fprintf(&report, "%-42s %-6s %-14s %-24s %-22s %s\n", r.name, h,
				fmt.Sprintf("%d/%d", st.caught, st.loops), fmt.Sprintf("%d/%d", st.falseHalts, st.progressing),
				fmt.Sprintf("%d/%d", early, st.loops), median(st.latencies))
			results[r.name+"|"+h] = st
		}
	}
	// Per source, both halves together: the table of the README.
	fmt.Fprintf(&report, "\n%-32s %-42s %-14s %s\n", "source (both halves)", "rule", "loops caught", "progressing runs halted")
	for _, src := range realSources {
		for _, r := range rules {
			st, _ := scoreReal(traces, r.run, func(tr *realTrace) bool { return tr.Source == src })
			fmt.Fprintf(&report, "%-32s %-42s %-14s %s\n", src, r.name, fmt.Sprintf("%d/%d", st.caught, st.loops), fmt.Sprintf("%d/%d", st.falseHalts, st.progressing))
		}
	}
	t.Log(report.String())
	// The targets (issue 15, as revised in its closing note): on each
	// half, loopguard halts no progressing run (OpenHands' rule halts
	// none) and catches at least OpenHands' loops plus two thirds of the
	// loops OpenHands misses; with the tool-call grain's budgets on, the
	// same.
	for _, h := range []string{"tune", "check"} {
		oh := results["OpenHands StuckDetector|"+h]
		need := oh.caught + (2*(oh.loops-oh.caught)+2)/3
		for _, name := range []string{"loopguard", "loopguard, GrainToolCall budgets"} {
			st := results[name+"|"+h]
			assert.Zero(t, st.falseHalts, "%s, %s half: progressing runs halted", name, h)
			assert.GreaterOrEqual(t, st.caught, need, "%s, %s half: loops caught", name, h)
		}
	}
	if testing.Verbose() {
		fmt.Print(report.String())
	}
}

// scoreReal runs a rule on the traces keep selects and scores it: loops
// caught, progressing runs halted, latency, and how many loops it halted
// before their labelled onset.
func scoreReal(traces []realTrace, run func([]corpusCall) int, keep func(*realTrace) bool) (st corpusStats, early int) {
	for i := range traces {
		tr := &traces[i]
		if !keep(tr) {
			continue
		}
		calls, onset := realCalls(tr)
		at := run(calls)
		var trip *Trip
		if at >= 0 {
			trip = &Trip{Reason: ReasonStalled}
		}
		if tr.Loop && at >= 0 && at < onset {
			early++
		}
		st.add(&corpusTrace{Name: tr.Name, Loop: tr.Loop, Onset: onset}, at, trip, false)
	}
	return st, early
}
