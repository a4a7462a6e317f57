package interceptor_test

import (
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/internal/judge"
	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
)

// TestJudgeAheadNeverWrong walks random runs through two Judges, one
// asked Ahead before every call: the two judge alike (Ahead changes
// nothing), and wherever Ahead foresees a halt, the next call of a node
// that is not exempt raises it, with the seq, detector and what it does
// as foreseen; a warning is never foreseen as a halt.
func TestJudgeAheadNeverWrong(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	results := make([]any, 0, 4)
	for _, r := range []string{"the same patch", "tests fail: 3", "tests fail: 2"} {
		p, err := dc.ToPayloads(r)
		require.NoError(t, err)
		results = append(results, p)
	}
	results = append(results, temporal.NewApplicationError("sandbox unreachable", "SandboxDown"))
	nodes := []string{"Code", "Verify", "Search", "Poll"}
	rng := uint64(5)
	next := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	foreseen, fromResults, halts, warned := 0, 0, 0, 0
	for run := 0; run < 200; run++ {
		opts := interceptor.Options{Warnings: run % 3, MaxTotalCalls: 30 + run%20, MaxNodeRuntime: time.Duration(8+run%8) * time.Second, OnHalt: []protocol.OnHalt{protocol.OnHaltPause, protocol.OnHaltFail, protocol.OnHaltObserve}[run%3],
			Nodes: map[string]interceptor.NodeOptions{"Poll": {Exempt: true}}}
		plain, asked := newAheadJudge(t, opts), newAheadJudge(t, opts)
		now := time.Unix(1000, 0)
		for k := 0; k < 40; k++ {
			// Asked at the task's start, as a watcher asks, before the
			// clock moves on to the call: a preview that changed the
			// Judge would read the results at the earlier time.
			ev, policy, ok := asked.Ahead()
			now = now.Add(time.Duration(next(3)) * time.Second)
			plain.Now(now)
			asked.Now(now)
			node := nodes[next(len(nodes))]
			a, b := plain.Call(interceptor.KindActivity, node, nil), asked.Call(interceptor.KindActivity, node, nil)
			require.Equal(t, a, b)
			pv, av := plain.Verdicts(), asked.Verdicts()
			require.Equal(t, pv, av, "run %d call %d: Ahead changed the judgement", run, k)
			for _, v := range av {
				if v.Halt != nil {
					halts++
				} else {
					warned++
				}
			}
			if ok && node != "Poll" {
				foreseen++
				if ev.HaltReason != protocol.ReasonBudgetExceeded {
					fromResults++
				}
				require.NotEmpty(t, av, "run %d call %d: %s foreseen at %s, nothing came", run, k, ev.Detector, node)
				v := av[0]
				require.NotNil(t, v.Halt, "run %d call %d: a warning foreseen as a halt", run, k)
				assert.Equal(t, ev.Seq, v.Halt.Seq)
				assert.Equal(t, ev.Detector, v.Halt.Detector)
				assert.Equal(t, policy, v.OnHalt)
				if ev.Node != "" {
					assert.Equal(t, ev.Node, v.Halt.Node)
				}
			}
			if a < 0 {
				continue
			}
			r := results[next(len(results))]
			switch r := r.(type) {
			case error:
				plain.Result(a, nil, r, nil)
				asked.Result(b, nil, r, nil)
			default:
				plain.Result(a, r.(*commonpb.Payloads), nil, nil)
				asked.Result(b, r.(*commonpb.Payloads), nil, nil)
			}
		}
	}
	t.Logf("%d halts, %d warnings, %d halts foreseen, %d of them by the results read", halts, warned, foreseen, fromResults)
	assert.Positive(t, fromResults)
}

func newAheadJudge(t *testing.T, opts interceptor.Options) judge.Judge {
	j, err := judge.New(opts)
	require.NoError(t, err)
	require.True(t, j.Start(judgeInfo("Agent"), time.Unix(1000, 0)))
	return j
}
