package interceptor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/internal/traces"
)

// judgeTrace runs a trace of the real corpus through a Judge under opts
// (halts observed, as the analysis does) and returns its verdicts, and
// whether the run ended with the loop of its last verdict, a warning, no
// longer warned: it heeded the warning (it brought something new).
func judgeTrace(t *testing.T, tr traces.Trace, opts Options) (out []Verdict, heeded bool) {
	t.Helper()
	j, err := newJudge(opts)
	require.NoError(t, err)
	info := &workflow.Info{}
	info.WorkflowType.Name = traces.WorkflowType
	info.WorkflowExecution.ID = tr.Name
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j.Start(info, now)
	dc := converter.GetDefaultDataConverter()
	for _, st := range tr.Steps {
		now = now.Add(time.Second)
		j.Now(now)
		if st.Input {
			p, _ := dc.ToPayload(st.Output)
			j.Signal(traces.UserSignal, p)
			continue
		}
		id := j.Call(KindActivity, st.Node, nil)
		out = append(out, j.Verdicts()...)
		if id < 0 {
			continue
		}
		if st.Err != "" {
			j.Result(id, nil, fmt.Errorf("%s", st.Err), dc)
			continue
		}
		p, _ := dc.ToPayloads(st.Output)
		j.Result(id, p, nil, dc)
	}
	if n := len(out); n > 0 && out[n-1].Warning != nil {
		heeded = j.g.pause.warnings(keyOf(*out[n-1].Warning)) == 0
	}
	return out, heeded
}

// TestLivenessOnTheRealCorpus: under the README's setup (GrainToolCall,
// Warnings 1), every loop of the development corpus that the guard without
// warnings halts is warned at that same call, then halted within the
// liveness bound, unless its run ends first or the agent heeded the
// warning (its calls brought something new, and the guard took the
// warning off: a real agent that changes course is not a loop that keeps
// repeating). Reported per corpus half (tune, check): the bound was
// stated before either was read.
func TestLivenessOnTheRealCorpus(t *testing.T) {
	all, err := traces.Load("detect/testdata/real")
	require.NoError(t, err)
	base := Options{Grain: GrainToolCall}
	readme := base
	readme.Warnings = 1
	type tally struct{ caught, warned, halted, endedFirst, heeded int }
	halves := map[string]*tally{"tune": {}, "check": {}}
	for _, tr := range all {
		vs, _ := judgeTrace(t, tr, base)
		onset := firstHalt(vs)
		if onset == nil {
			continue
		}
		h := halves[tr.Half]
		require.NotNil(t, h, "%s: half %q", tr.Name, tr.Half)
		h.caught++
		vs, heeded := judgeTrace(t, tr, readme)
		require.NotEmpty(t, vs, tr.Name)
		first := vs[0]
		assert.Equal(t, onset.Call, first.Call, "%s: the first verdict is at the onset", tr.Name)
		if first.Warning != nil {
			h.warned++
		}
		bound, err := HaltBound(readme, max(onset.Period, 1))
		require.NoError(t, err)
		switch halt := firstHalt(vs); {
		case halt != nil:
			h.halted++
			assert.LessOrEqual(t, halt.Call, onset.Call+bound, "%s: onset %d, halted at %d, bound %d", tr.Name, onset.Call, halt.Call, bound)
		case heeded:
			h.heeded++
		default:
			h.endedFirst++
			assert.Less(t, tr.Calls(), onset.Call+bound, "%s: onset %d, not halted in %d calls, bound %d", tr.Name, onset.Call, tr.Calls(), bound)
		}
	}
	for _, half := range []string{"tune", "check"} {
		h := halves[half]
		t.Logf("%s half: %d loops halted without warnings; with Warnings 1, %d warned at the onset, then %d halted within the bound, %d heeded the warning, %d ended first",
			half, h.caught, h.warned, h.halted, h.heeded, h.endedFirst)
	}
}

func firstHalt(vs []Verdict) *Verdict {
	for i := range vs {
		if vs[i].Halt != nil {
			return &vs[i]
		}
	}
	return nil
}
