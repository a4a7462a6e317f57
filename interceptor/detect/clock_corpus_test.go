package detect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadClockCorpus reads testdata/clocks: traces of the classes the
// fourth generation's clock rules are for (provider envelopes with usage
// blocks, an agent runtime's event stream, tool output with progress
// meters, a task_progress checklist, a step counter), in the real
// corpus's format, labelled and split into halves before any detector
// ran (testdata/clocks/README.md).
func loadClockCorpus(t testing.TB) []realTrace {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "clocks", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var traces []realTrace
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var tr realTrace
		require.NoError(t, json.Unmarshal(b, &tr), f)
		require.Equal(t, strings.TrimSuffix(filepath.Base(f), ".json"), tr.Name, f)
		require.Contains(t, []string{"tune", "check"}, tr.Half, f)
		require.NotEmpty(t, tr.Why, f)
		if tr.Loop {
			require.True(t, tr.Onset >= 0 && tr.Onset < len(tr.Steps), f)
		}
		traces = append(traces, tr)
	}
	return traces
}

// TestClockCorpus reports, per half, the loops caught and the
// progressing runs halted with GrainToolCall budgets, and holds the
// detectors to every loop caught and no progressing run halted on both
// halves.
//
//	go test ./interceptor/detect/ -run TestClockCorpus -v
func TestClockCorpus(t *testing.T) {
	traces := loadClockCorpus(t)
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-38s %-6s %-14s %-24s %-20s %s\n", "rule (GrainToolCall budgets)", "half", "loops caught", "progressing runs halted", "loops halted early", "median latency")
	run := func(calls []corpusCall) int {
		at, _ := replay(ToolCallPolicy(), calls)
		return at
	}
	for _, h := range []string{"tune", "check"} {
		st, early := scoreReal(traces, run, func(tr *realTrace) bool { return tr.Half == h })
		fmt.Fprintf(&report, "%-38s %-6s %-14s %-24s %-20s %s\n", "loopguard", h,
			fmt.Sprintf("%d/%d", st.caught, st.loops), fmt.Sprintf("%d/%d", st.falseHalts, st.progressing),
			fmt.Sprintf("%d/%d", early, st.loops), median(st.latencies))
		assert.Equal(t, st.loops, st.caught, "%s half: loops caught", h)
		assert.Zero(t, st.falseHalts, "%s half: progressing runs halted", h)
		assert.Zero(t, early, "%s half: loops halted before their onset", h)
	}
	for i := range traces {
		tr := &traces[i]
		calls, onset := realCalls(tr)
		at, trip := replay(ToolCallPolicy(), calls)
		verdict := "runs on"
		if at >= 0 {
			verdict = fmt.Sprintf("halted at %d (onset %d): %s", at, onset, trip.Message)
		}
		fmt.Fprintf(&report, "%-30s %-5s loop=%-5v %s\n", tr.Name, tr.Half, tr.Loop, verdict)
	}
	t.Log(report.String())
}
