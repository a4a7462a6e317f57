package frameworks

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/temporalproto"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/internal/traces"
)

var (
	nativeDir = flag.String("frameworks.native", "../../testdata/progressing",
		"native histories of the real corpus (go run ./worker/cmd/record-traces -n 0 -out DIR); default: the three progressing runs kept for TestDefaultPolicyHaltsNoProgressingRun")
	outDir = flag.String("frameworks.out", "", "also write the mapped histories here, one folder per shape (for timing worker analyze)")
)

// realTraces is the development corpus: its labels and halves.
const realTraces = "../../../interceptor/detect/testdata/real"

// cell is one shape's score on one half.
type cell struct {
	score  history.Score
	within int // loops caught within one call of the native halt
	same   int // loops the native shape caught that this one caught too
}

// TestFrameworkCorpus maps each native history of the real corpus onto
// the AI SDK's and OpenAI Agents' shapes (Map) and judges all three under
// GrainToolCall, the commands' default without its warning, printing loops caught, false
// halts and halt latency per half and shape. Without -frameworks.native it
// reads the three progressing runs of worker/testdata/progressing and
// asserts that no shape halts them. The whole corpus:
//
//	go run ./worker/cmd/record-traces -n 0 -out /tmp/native
//	cd worker && go test ./e2e/frameworks/ -run TestFrameworkCorpus -v -args -frameworks.native /tmp/native
func TestFrameworkCorpus(t *testing.T) {
	all, err := traces.Load(realTraces)
	require.NoError(t, err)
	labels := history.Labels{}
	half := map[string]string{}
	for _, tr := range all {
		id := "trace-" + tr.Name
		labels[id] = history.Label{Loop: tr.Loop, Onset: tr.Onset}
		half[id] = tr.Half
	}
	files, err := filepath.Glob(filepath.Join(*nativeDir, "*.json*"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no histories in %s", *nativeDir)

	opts := history.Options{Guard: interceptor.Options{Grain: interceptor.GrainToolCall}}
	shapes := append([]Shape{"native"}, Shapes...)
	analyzers := map[Shape]*history.Analyzer{}
	for _, s := range shapes {
		a, err := history.NewAnalyzer(opts)
		require.NoError(t, err)
		analyzers[s] = a
	}
	cells := map[string]*cell{}
	at := func(s Shape, h string) *cell {
		k := string(s) + "/" + h
		if cells[k] == nil {
			cells[k] = &cell{}
		}
		return cells[k]
	}
	var sizes = map[Shape]int{}
	for _, f := range files {
		if filepath.Base(f) == "manifest.json" || strings.HasSuffix(f, ".md") {
			continue
		}
		native := map[string]int{} // first halt of the native shape
		for _, s := range shapes {
			h, err := history.ReadHistoryFile(f)
			require.NoError(t, err)
			if s != "native" {
				require.NoError(t, Map(h, s), f)
			}
			data, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(h)
			require.NoError(t, err)
			sizes[s] += len(data)
			if *outDir != "" {
				writeHistory(t, filepath.Join(*outDir, string(s), filepath.Base(strings.TrimSuffix(f, ".gz"))), data)
			}
			ex := analyzers[s].History(h, f)
			require.NoError(t, ex.Err, f)
			l, ok := labels[ex.WorkflowID]
			require.True(t, ok, "%s: %s is not a trace of the corpus", f, ex.WorkflowID)
			c := at(s, half[ex.WorkflowID])
			c.score.Add(ex, labels)
			first := firstHalt(ex)
			if s == "native" {
				native[ex.WorkflowID] = first
			} else if l.Loop && first > 0 && native[ex.WorkflowID] > 0 {
				c.same++
				if d := first - native[ex.WorkflowID]; d >= -1 && d <= 1 {
					c.within++
				}
			}
		}
	}

	t.Logf("%-14s %-6s %-14s %-12s %-8s %-22s", "shape", "half", "loops caught", "false halts", "median", "same loops, ±1 call")
	for _, s := range shapes {
		for _, h := range []string{"tune", "check"} {
			c := at(s, h)
			sc := c.score
			same := "-"
			if s != "native" {
				same = fmt.Sprintf("%d, %d", c.same, c.within)
			}
			t.Logf("%-14s %-6s %-14s %-12s %-8d %-22s", s, h, fmt.Sprintf("%d/%d", sc.LoopsHalted, sc.Loops),
				fmt.Sprintf("%d/%d", sc.ProgressingHalted, sc.Progressing), sc.MedianAfter(), same)
		}
	}
	for _, s := range shapes {
		t.Logf("%s: %d bytes of history JSON (%.1f× native)", s, sizes[s], float64(sizes[s])/float64(sizes["native"]))
	}
	if *nativeDir == flag.Lookup("frameworks.native").DefValue {
		for _, s := range shapes {
			for _, h := range []string{"tune", "check"} {
				require.Zero(t, at(s, h).score.ProgressingHalted, "%s, %s half: a progressing run halted", s, h)
			}
		}
	}
}

// firstHalt is the call of the execution's first halt (0: none).
func firstHalt(ex history.Execution) int {
	for _, v := range ex.Verdicts {
		if v.Halt != nil {
			return v.Call
		}
	}
	return 0
}

func writeHistory(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}
