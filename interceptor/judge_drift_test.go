package interceptor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/internal/judge"
	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
)

// The drifts between the guard and the Judge that one core removed: each
// test runs the live guard and the Judge on the same calls and input.

// childHalt is the loop.halted a supervisor hears from a child it
// watches: another execution's halt.
var childHalt = protocol.HaltEvent{WorkflowID: "child", RunID: "child-run", Seq: 1, HaltReason: protocol.ReasonStalled}

// TestJudgeTakesAnotherRunsLoopHaltedAsInput: a loop.halted from another
// execution (a supervisor's child) is outside input to the live guard: no
// repetition spans it, so two identical calls before it and two after do
// not halt. The Judge takes it alike (it took every loop.halted as the
// guard's own echo, and halted at the fourth call); its own echo, and a
// stale one of the same workflow, are still the guard's and no input.
func TestJudgeTakesAnotherRunsLoopHaltedAsInput(t *testing.T) {
	// Live: Code four times with the same result, a minute's sleep before
	// the third, and (or not) the child's loop.halted during it.
	liveHalted := func(signal bool) bool {
		env := newEnv(t, interceptor.Options{})
		give := repeat(4, "Code", "the same patch")
		give[2].Sleep = time.Minute
		if signal {
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(protocol.DefaultHaltedSignal, childHalt)
			}, 30*time.Second)
		}
		statusThen(t, env, decideAfter, func() {
			env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "test"})
		})
		env.ExecuteWorkflow(scriptLoop, give)
		return result(t, env).Escalated
	}
	require.True(t, liveHalted(false), "four identical results halt")
	require.False(t, liveHalted(true), "the child's halt is input: no repetition spans it")

	// The Judge, fed the same: it must agree.
	judgeHalted := func(echo *protocol.HaltEvent) (halted, took bool) {
		j, err := judge.New(interceptor.Options{})
		require.NoError(t, err)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		require.True(t, j.Start(judgeInfo("Agent"), now))
		same, err := converter.GetDefaultDataConverter().ToPayloads("the same patch")
		require.NoError(t, err)
		for i := range 4 {
			if i == 2 {
				j.Timer()
				if echo != nil {
					now = now.Add(30 * time.Second)
					j.Now(now)
					p, err := converter.GetDefaultDataConverter().ToPayload(echo)
					require.NoError(t, err)
					took = j.Signal(protocol.DefaultHaltedSignal, p)
				}
			}
			now = now.Add(time.Minute)
			j.Now(now)
			id := j.Call(interceptor.KindActivity, "Code", nil)
			require.GreaterOrEqual(t, id, 0)
			j.Result(id, same, nil, nil)
		}
		for _, v := range j.Verdicts() {
			halted = halted || v.Halt != nil
		}
		return halted, took
	}
	halted, _ := judgeHalted(nil)
	assert.True(t, halted, "four identical results halt")
	halted, took := judgeHalted(&childHalt)
	assert.False(t, took, "another execution's halt is not the guard's")
	assert.False(t, halted, "the child's halt is input: no repetition spans it")

	own := protocol.HaltEvent{WorkflowID: "w", RunID: "r", Seq: 1}
	halted, took = judgeHalted(&own)
	assert.True(t, took, "the guard's own echo")
	assert.True(t, halted, "its own echo is no input")
	stale := protocol.HaltEvent{WorkflowID: "w", RunID: "run before the reset", Seq: 1}
	halted, took = judgeHalted(&stale)
	assert.True(t, took, "a stale echo of the same workflow is the guard's")
	assert.True(t, halted, "a stale echo is no input")
}

// TestJudgeRecoversAPanickingNodeName: a NodeName hook that panics names
// the call by its type, and says so in the log, in the Judge as in the
// guard (callNode recovers for both; the Judge named the call alike but
// logged nothing). Judge.Node names a call the same way for a reader
// that needs the name itself.
func TestJudgeRecoversAPanickingNodeName(t *testing.T) {
	opts := interceptor.Options{NodeName: func(c interceptor.Call) string {
		if c.Type == "Code" {
			panic("the hook's bug")
		}
		return ""
	}}
	j, err := judge.New(opts)
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.True(t, j.Start(judgeInfo("Agent"), now))
	same, err := converter.GetDefaultDataConverter().ToPayloads("the same patch")
	require.NoError(t, err)
	for range 4 {
		now = now.Add(time.Second)
		j.Now(now)
		id := j.Call(interceptor.KindActivity, "Code", nil)
		require.GreaterOrEqual(t, id, 0, "judged, not failed")
		j.Result(id, same, nil, nil)
	}
	v := j.Verdicts()
	require.NotEmpty(t, v)
	require.NotNil(t, v[0].Halt)
	assert.Equal(t, "Code", v[0].Halt.Node, "named by its type")
	logs := j.Logs()
	require.NotEmpty(t, logs, "the panic is logged, as the guard logs it")
	assert.True(t, strings.Contains(logs[0], "NodeName panicked") && strings.Contains(logs[0], "the hook's bug"), logs[0])

	assert.Equal(t, "Code", j.Node(interceptor.KindActivity, "Code", nil))
	assert.Equal(t, "Plan", j.Node(interceptor.KindActivity, "Plan", nil), "a hook that returns nothing names the call by its type")

	// The live guard: the same calls, the same halt at the same node.
	env := newEnv(t, opts)
	halted := statusThen(t, env, decideAfter, func() {
		env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "test"})
	})
	env.ExecuteWorkflow(scriptLoop, repeat(6, "Code", "the same patch"))
	res := result(t, env)
	require.True(t, res.Escalated)
	require.NotNil(t, halted.Halt)
	assert.Equal(t, v[0].Halt.Node, halted.Halt.Node)
	assert.Equal(t, v[0].Halt.Detector, halted.Halt.Detector)
	assert.Equal(t, v[0].Call, halted.TotalCalls+1, "the same call held: the one after those the detectors counted")
}
