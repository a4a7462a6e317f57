package interceptor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// decideAfter is when, in workflow time, the tests' human looks at a halted
// workflow. Scripted activities take no time, so by then the loop is either
// done or paused.
const decideAfter = time.Hour

func distinct(n int, node string) []turn {
	ts := make([]turn, n)
	for i := range ts {
		ts[i] = turn{Node: node, Output: fmt.Sprintf("%s-%d", node, i)}
	}
	return ts
}

func TestGuardHalts(t *testing.T) {
	metricOpts := interceptor.Options{Nodes: map[string]interceptor.NodeOptions{
		"Verify": {MetricField: "failing"},
	}}
	tests := []struct {
		name         string
		opts         interceptor.Options
		give         []turn
		decision     string // signal sent when halted: "resume", "escalate" or "" for none
		payload      any
		wantReason   protocol.HaltReason // "" means it must never halt
		wantDetector detect.Detector
		wantNode     string
		wantCalls    int
		wantEsc      bool
	}{
		{
			name:         "identical outputs stall and resume",
			give:         repeat(5, "Code", "same patch"),
			decision:     "resume",
			wantReason:   protocol.ReasonStalled,
			wantDetector: detect.DetectorIdenticalOutput,
			wantNode:     "Code",
			wantCalls:    5,
		},
		{
			name:         "identical outputs stall and escalate",
			give:         repeat(5, "Code", "same patch"),
			decision:     "escalate",
			payload:      map[string]string{"reason": "agent is stuck", "by": "ops"},
			wantReason:   protocol.ReasonStalled,
			wantDetector: detect.DetectorIdenticalOutput,
			wantNode:     "Code",
			wantCalls:    4, // the fourth call returns the escalation
			wantEsc:      true,
		},
		{
			name:         "identical but for an ignored timestamp",
			opts:         interceptor.Options{IgnoreFields: []string{"at"}},
			give:         []turn{{Node: "Code", Output: "x", Stamp: true}, {Node: "Code", Output: "x", Stamp: true}, {Node: "Code", Output: "x", Stamp: true}, {Node: "Code", Output: "y", Stamp: true}},
			decision:     "resume",
			wantReason:   protocol.ReasonStalled,
			wantDetector: detect.DetectorIdenticalOutput,
			wantNode:     "Code",
			wantCalls:    4,
		},
		{
			name:      "a timestamp alone is a change when not ignored",
			give:      []turn{{Node: "Code", Output: "x", Stamp: true}, {Node: "Code", Output: "x", Stamp: true}, {Node: "Code", Output: "x", Stamp: true}, {Node: "Code", Output: "y", Stamp: true}},
			wantCalls: 4,
		},
		{
			name:         "A/B oscillation",
			give:         []turn{{Node: "Code", Output: "A"}, {Node: "Code", Output: "B"}, {Node: "Code", Output: "A"}, {Node: "Code", Output: "B"}, {Node: "Code", Output: "C"}},
			decision:     "resume",
			wantReason:   protocol.ReasonOscillating,
			wantDetector: detect.DetectorOutputOscillation,
			wantNode:     "Code",
			wantCalls:    5,
		},
		{
			name:         "repeated error",
			give:         []turn{{Node: "Verify", Err: "connection refused at 10.0.0.1:5432"}, {Node: "Verify", Err: "connection refused at 10.0.0.2:5432"}, {Node: "Verify", Err: "connection refused at 10.0.0.3:5432"}, {Node: "Verify", Output: "ok"}},
			decision:     "escalate",
			wantReason:   protocol.ReasonRepeatedError,
			wantDetector: detect.DetectorRepeatedError,
			wantNode:     "Verify",
			wantCalls:    4,
			wantEsc:      true,
		},
		{
			name:         "cycle iteration budget",
			give:         codeVerify([]string{"p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}, []int{20, 19, 18, 17, 16, 15, 14, 13, 12}),
			decision:     "resume",
			payload:      map[string]any{"reason": "still converging", "extend": map[string]int{"maxCycleIterations": 2}},
			wantReason:   protocol.ReasonBudgetExceeded,
			wantDetector: detect.DetectorCycleIterations,
			wantNode:     "Code",
			wantCalls:    18,
		},
		{
			name:         "per-node call budget",
			opts:         interceptor.Options{MaxCallsPerNode: 3},
			give:         distinct(4, "Research"),
			decision:     "escalate",
			wantReason:   protocol.ReasonBudgetExceeded,
			wantDetector: detect.DetectorNodeCalls,
			wantNode:     "Research",
			wantCalls:    4,
			wantEsc:      true,
		},
		{
			name:         "metric does not improve",
			opts:         metricOpts,
			give:         codeVerify([]string{"p1", "p2", "p3", "p4", "p5", "p6"}, []int{7, 4, 4, 4, 4, 4}),
			decision:     "escalate",
			wantReason:   protocol.ReasonStalled,
			wantDetector: detect.DetectorNoImprovement,
			wantNode:     "Verify",
			wantCalls:    11,
			wantEsc:      true,
		},
		{
			name: "edge taken without progress",
			opts: interceptor.Options{MaxCycleIterations: 20, MaxCallsPerNode: 20},
			give: func() []turn {
				var ts []turn
				for i := 0; i < 10; i++ {
					ts = append(ts, turn{Node: "Plan", Output: fmt.Sprintf("plan %d", i)}, turn{Node: "Research", Output: []string{"a", "b", "c", "d"}[i%4]})
				}
				return ts
			}(),
			decision:     "escalate",
			wantReason:   protocol.ReasonStalled,
			wantDetector: detect.DetectorEdgeWithoutProgress,
			wantNode:     "Research",
			wantCalls:    20,
			wantEsc:      true,
		},
		{
			name:         "declared progress unchanged",
			opts:         interceptor.Options{Nodes: map[string]interceptor.NodeOptions{"Code": {ProgressFields: []string{"output"}}}},
			give:         []turn{{Node: "Code", Output: "diff-1", Failing: 1}, {Node: "Code", Output: "diff-1", Failing: 2}, {Node: "Code", Output: "diff-1", Failing: 3}, {Node: "Code", Output: "diff-2"}},
			decision:     "resume",
			wantReason:   protocol.ReasonStalled,
			wantDetector: detect.DetectorUnchangedProgress,
			wantNode:     "Code",
			wantCalls:    4,
		},
		{
			name: "cycle runtime budget",
			opts: interceptor.Options{MaxCycleRuntime: 3 * time.Minute},
			give: func() []turn {
				ts := codeVerify([]string{"p1", "p2", "p3", "p4"}, []int{4, 3, 2, 1})
				for i := range ts {
					ts[i].Sleep = time.Minute
				}
				return ts
			}(),
			decision:     "escalate",
			wantReason:   protocol.ReasonBudgetExceeded,
			wantDetector: detect.DetectorCycleRuntime,
			wantNode:     "Code",
			wantCalls:    5,
			wantEsc:      true,
		},
		{
			name:         "total calls budget",
			opts:         interceptor.Options{MaxTotalCalls: 5},
			give:         append(distinct(3, "Plan"), distinct(3, "Research")...),
			decision:     "escalate",
			wantReason:   protocol.ReasonBudgetExceeded,
			wantDetector: detect.DetectorTotalCalls,
			wantNode:     "Research",
			wantCalls:    6,
			wantEsc:      true,
		},
		{
			name:         "cost budget",
			opts:         interceptor.Options{MaxCost: 10, Nodes: map[string]interceptor.NodeOptions{"Research": {CostField: "cost"}}},
			give:         []turn{{Node: "Research", Output: "a", Cost: 4}, {Node: "Research", Output: "b", Cost: 4}, {Node: "Research", Output: "c", Cost: 4}, {Node: "Plan", Output: "p"}},
			decision:     "escalate",
			wantReason:   protocol.ReasonBudgetExceeded,
			wantDetector: detect.DetectorTotalCost,
			wantNode:     "Plan",
			wantCalls:    4,
			wantEsc:      true,
		},
		{
			name:      "converging loop never halts",
			opts:      metricOpts,
			give:      codeVerify([]string{"p1", "p2", "p3", "p4"}, []int{7, 4, 2, 0}),
			wantCalls: 8,
		},
		{
			name: "fan-out is one step",
			give: []turn{
				{Node: "Research", Output: "r", With: true}, {Node: "Research", Output: "r", With: true}, {Node: "Research", Output: "r", With: true}, {Node: "Research", Output: "r"},
				{Node: "Plan", Output: "p1"},
				{Node: "Research", Output: "s", With: true}, {Node: "Research", Output: "s", With: true}, {Node: "Research", Output: "s"},
				{Node: "Plan", Output: "p2"},
			},
			wantCalls: 9,
		},
		{
			name:      "one retry then success",
			give:      []turn{{Node: "Verify", Err: "flaky"}, {Node: "Verify", Output: "ok"}, {Node: "Code", Output: "done"}},
			wantCalls: 3,
		},
		{
			name:      "results without a value are no stall",
			give:      repeat(6, "Notify", ""),
			wantCalls: 6,
		},
		{
			name:         "failures without a value still repeat",
			give:         []turn{{Node: "Notify", Err: "smtp 421"}, {Node: "Notify", Err: "smtp 421"}, {Node: "Notify", Err: "smtp 421"}, {Node: "Notify"}},
			decision:     "resume",
			wantReason:   protocol.ReasonRepeatedError,
			wantDetector: detect.DetectorRepeatedError,
			wantNode:     "Notify",
			wantCalls:    4,
		},
		{
			name:      "exempt poller",
			opts:      interceptor.Options{Nodes: map[string]interceptor.NodeOptions{"Poll": {Exempt: true}}},
			give:      repeat(15, "Poll", "pending"),
			wantCalls: 15,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, tt.opts)
			var halted *protocol.Status
			env.RegisterDelayedCallback(func() {
				s := status(t, env)
				halted = &s
				if tt.decision != "" {
					env.SignalWorkflow(tt.decision, tt.payload)
				}
			}, decideAfter)
			env.ExecuteWorkflow(scriptLoop, tt.give)
			res := result(t, env)
			assert.Equal(t, tt.wantCalls, res.Calls, "calls")
			assert.Equal(t, tt.wantEsc, res.Escalated, "escalated")
			if tt.wantReason == "" {
				assert.Nil(t, halted, "the loop must not halt")
				assert.Zero(t, status(t, env).Halts)
				return
			}
			require.NotNil(t, halted, "the loop must halt")
			assert.Equal(t, protocol.StateHalted, halted.State)
			require.NotNil(t, halted.Halt)
			assert.Equal(t, tt.wantReason, halted.Halt.HaltReason)
			assert.Equal(t, tt.wantDetector, halted.Halt.Detector)
			assert.Equal(t, tt.wantNode, halted.Halt.Node)
			assert.NotEmpty(t, halted.Halt.SuggestedActions)
			assert.NotEmpty(t, halted.Halt.Message)
			after := status(t, env)
			assert.Equal(t, 1, after.Halts)
			require.NotNil(t, after.LastDecision)
			assert.Equal(t, protocol.Action(tt.decision), after.LastDecision.Action)
			if tt.wantEsc {
				assert.Equal(t, protocol.StateEscalated, after.State)
			} else {
				assert.Equal(t, protocol.StateRunning, after.State)
			}
		})
	}
}

func TestGuardCycleStatus(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	halted := statusThen(t, env, decideAfter, func() {
		env.SignalWorkflow("resume", map[string]any{"extend": map[string]int{"maxCycleIterations": 1}})
	})
	env.ExecuteWorkflow(scriptLoop, codeVerify([]string{"p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}, []int{9, 8, 7, 6, 5, 4, 3, 2, 1}))
	result(t, env)
	require.Len(t, halted.Cycles, 1)
	c := halted.Cycles[0]
	assert.ElementsMatch(t, []string{"Code", "Verify"}, c.Nodes)
	assert.Equal(t, 8, c.Iteration)
	assert.Equal(t, 8, c.MaxIterations)
	assert.Equal(t, c.CycleID, halted.Halt.CycleID)
	assert.Equal(t, 8, halted.Halt.Iteration)
	after := status(t, env)
	require.Len(t, after.Cycles, 1)
	assert.Equal(t, 9, after.Cycles[0].Iteration)
	assert.Equal(t, 9, after.Cycles[0].MaxIterations)
}

func TestGuardPolicies(t *testing.T) {
	t.Run("observe never blocks", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{OnHalt: protocol.OnHaltObserve})
		env.ExecuteWorkflow(scriptLoop, repeat(9, "Code", "same"))
		res := result(t, env)
		assert.Equal(t, 9, res.Calls)
		s := status(t, env)
		assert.Equal(t, protocol.StateRunning, s.State)
		assert.GreaterOrEqual(t, s.Halts, 2, "observed halts are counted")
	})
	t.Run("fail escalates at once", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{OnHalt: protocol.OnHaltFail})
		env.ExecuteWorkflow(scriptLoop, repeat(9, "Code", "same"))
		res := result(t, env)
		assert.True(t, res.Escalated)
		assert.Equal(t, 4, res.Calls)
		assert.Equal(t, protocol.StateEscalated, status(t, env).State)
	})
	t.Run("pause timeout escalates", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{PauseTimeout: 10 * time.Minute})
		env.ExecuteWorkflow(scriptLoop, repeat(9, "Code", "same"))
		res := result(t, env)
		assert.True(t, res.Escalated)
		assert.Contains(t, res.Reason, "pause timeout")
	})
	t.Run("pause timeout resumes", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{PauseTimeout: 10 * time.Minute, OnPauseTimeout: interceptor.TimeoutResume})
		env.ExecuteWorkflow(scriptLoop, repeat(5, "Code", "same"))
		res := result(t, env)
		assert.False(t, res.Escalated)
		assert.Equal(t, 5, res.Calls)
	})
}

func TestHooks(t *testing.T) {
	t.Run("NodeName merges calls into one node", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{NodeName: func(c interceptor.Call) string {
			if c.Kind == interceptor.KindActivity {
				return "agent"
			}
			return ""
		}})
		halted := statusThen(t, env, decideAfter, func() { env.SignalWorkflow("escalate", nil) })
		env.ExecuteWorkflow(scriptLoop, []turn{{Node: "Code", Output: "x"}, {Node: "Verify", Output: "x"}, {Node: "Plan", Output: "x"}, {Node: "Code", Output: "y"}})
		assert.True(t, result(t, env).Escalated)
		require.NotNil(t, halted.Halt)
		assert.Equal(t, "agent", halted.Halt.Node)
		assert.Equal(t, detect.DetectorIdenticalOutput, halted.Halt.Detector)
	})
	t.Run("ResultHook declares a metric", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{ResultHook: func(node string, data []byte, obs *interceptor.Observation) {
			if node == "Verify" {
				obs.HasMetric, obs.Metric = true, float64(strings.Count(string(data), "fail"))
			}
		}})
		halted := statusThen(t, env, decideAfter, func() { env.SignalWorkflow("escalate", nil) })
		give := []turn{
			{Node: "Verify", Output: "fail fail run1"}, {Node: "Verify", Output: "fail fail run2"},
			{Node: "Verify", Output: "fail fail run3"}, {Node: "Verify", Output: "fail fail run4"}, {Node: "Verify", Output: "ok"},
		}
		env.ExecuteWorkflow(scriptLoop, give)
		assert.True(t, result(t, env).Escalated)
		require.NotNil(t, halted.Halt)
		assert.Equal(t, detect.DetectorNoImprovement, halted.Halt.Detector)
		assert.Equal(t, []float64{3, 3, 3, 3}, halted.Halt.Evidence.Metrics, "two in the output, one in the \"failing\" key")
	})
	t.Run("GuardWorkflow leaves an execution unguarded", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{GuardWorkflow: func(info *workflow.Info) bool { return info.WorkflowType.Name != "ScriptLoop" }})
		env.ExecuteWorkflow(scriptLoop, repeat(6, "Code", "same"))
		assert.Equal(t, 6, result(t, env).Calls)
		assert.Equal(t, protocol.StateDisabled, status(t, env).State)
	})
}

func TestNodeRuntimeBudget(t *testing.T) {
	env := newEnv(t, interceptor.Options{Nodes: map[string]interceptor.NodeOptions{"Research": {MaxRuntime: 25 * time.Minute}}})
	// Each research call takes ten minutes of workflow time.
	env.OnActivity("Research", mock.Anything, mock.Anything, mock.Anything).After(10 * time.Minute).Return(
		func(_ context.Context, _ turn, i int) (agentResult, error) {
			return agentResult{Output: fmt.Sprint("findings ", i)}, nil
		})
	halted := statusThen(t, env, 5*decideAfter, func() { env.SignalWorkflow("escalate", nil) })
	give := []turn{{Node: "Research"}, {Node: "Plan", Output: "1"}, {Node: "Research"}, {Node: "Plan", Output: "2"}, {Node: "Research"}, {Node: "Plan", Output: "3"}, {Node: "Research"}}
	env.ExecuteWorkflow(scriptLoop, give)
	assert.True(t, result(t, env).Escalated)
	require.NotNil(t, halted.Halt)
	assert.Equal(t, detect.DetectorNodeRuntime, halted.Halt.Detector)
	assert.Equal(t, "Research", halted.Halt.Node)
	require.NotEmpty(t, halted.Nodes)
	assert.Equal(t, 30*time.Minute, halted.Nodes[0].Runtime, "three ten-minute calls")
}

func TestParallelBranchesShareOnePause(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	looping := repeat(5, "Code", "same")
	other := distinct(4, "Research")
	for i := range other {
		other[i].Sleep = 10 * time.Minute // still working when the loop halts
	}
	halted := statusThen(t, env, decideAfter, func() { env.SignalWorkflow("resume", nil) })
	env.ExecuteWorkflow(twoBranches, looping, other)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res []loopResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, 5, res[0].Calls)
	assert.Equal(t, 4, res[1].Calls)
	assert.Equal(t, 1, halted.Halts, "the branch that calls while the other is paused waits for the same decision")
	assert.Equal(t, 1, status(t, env).Halts)
}

func TestHumanHaltInObserveModePauses(t *testing.T) {
	env := newEnv(t, interceptor.Options{OnHalt: protocol.OnHaltObserve})
	give := distinct(4, "Plan")
	for i := range give {
		give[i].Sleep = time.Minute
	}
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("halt", nil) }, 90*time.Second)
	halted := statusThen(t, env, decideAfter, func() { env.SignalWorkflow("escalate", nil) })
	env.ExecuteWorkflow(scriptLoop, give)
	assert.True(t, result(t, env).Escalated)
	assert.Equal(t, protocol.StateHalted, halted.State)
	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonUserStop, halted.Halt.HaltReason)
	assert.False(t, halted.Halt.Observed)
}

func TestHumanHalt(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	give := distinct(6, "Plan")
	for i := range give {
		give[i].Sleep = time.Minute
	}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("halt", map[string]string{"reason": "checking costs", "by": "ana"})
	}, 150*time.Second)
	halted := statusThen(t, env, decideAfter, func() {
		env.SignalWorkflow("halt", nil) // already halted: rejected
		env.SignalWorkflow("resume", nil)
	})
	env.ExecuteWorkflow(scriptLoop, give)
	res := result(t, env)
	assert.Equal(t, 6, res.Calls)
	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonUserStop, halted.Halt.HaltReason)
	assert.Contains(t, halted.Halt.Message, "ana asked to stop: checking costs")
	assert.Equal(t, "Plan", halted.Halt.Node)
	after := status(t, env)
	require.NotNil(t, after.LastRejected)
	assert.Equal(t, "halt", after.LastRejected.Name)
	assert.Contains(t, after.LastRejected.Reason, "already halted")
}

func TestBadSignalsAreRejectedAndRecorded(t *testing.T) {
	tests := []struct {
		name       string
		signal     string
		payload    any
		wantReason string
	}{
		{"resume when running", "resume", nil, "nothing is halted"},
		{"escalate when running", "escalate", map[string]string{"reason": "x"}, "nothing is halted"},
		{"unknown field", "resume", map[string]any{"bogus": 1}, `unknown field "bogus"`},
		{"wrong type", "resume", map[string]any{"reason": 42}, "malformed JSON"},
		{"binary payload", "escalate", []byte{0xff, 0x00}, "unsupported payload encoding"},
		{"oversize payload", "halt", map[string]string{"reason": strings.Repeat("x", 20<<10)}, "exceeds the limit"},
		{"extend on escalate", "escalate", map[string]any{"extend": map[string]int{"maxCycleIterations": 1}}, `"extend" is only accepted by resume`},
		{"negative extend", "resume", map[string]any{"extend": map[string]int{"maxCycleIterations": -1}}, "extend.maxCycleIterations must not be negative"},
		{"unknown extend field", "resume", map[string]any{"extend": map[string]int{"maxTurns": 1}}, `unknown field "maxTurns"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, interceptor.Options{})
			give := distinct(3, "Plan")
			give[1].Sleep = time.Hour
			var mid protocol.Status
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(tt.signal, tt.payload)
			}, time.Minute)
			env.RegisterDelayedCallback(func() {
				mid = status(t, env)
			}, 2*time.Minute)
			env.ExecuteWorkflow(scriptLoop, give)
			res := result(t, env)
			assert.Equal(t, 3, res.Calls, "the workflow carries on untouched")
			require.NotNil(t, mid.LastRejected)
			assert.Equal(t, tt.signal, mid.LastRejected.Name)
			assert.Contains(t, mid.LastRejected.Reason, tt.wantReason)
			assert.Equal(t, protocol.StateRunning, mid.State)
			assert.Zero(t, mid.Halts)
		})
	}
}

func TestUpdates(t *testing.T) {
	t.Run("rejected when nothing is halted", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{})
		give := distinct(2, "Plan")
		give[1].Sleep = time.Hour
		var rejected error
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow("resume", "u1", &testUpdate{onReject: func(err error) { rejected = err }}, map[string]string{"reason": "x"})
		}, time.Minute)
		env.ExecuteWorkflow(scriptLoop, give)
		result(t, env)
		require.Error(t, rejected)
		assert.Contains(t, rejected.Error(), "nothing is halted")
	})
	t.Run("malformed payload rejected, then escalate accepted", func(t *testing.T) {
		env := newEnv(t, interceptor.Options{})
		var malformed error
		var decision protocol.Decision
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow("resume", "u1", &testUpdate{onReject: func(err error) { malformed = err }, onComplete: func(v any, err error) { t.Logf("u1 completed %v %v", v, err) }}, map[string]any{"extend": "lots"})
		}, decideAfter)
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow("escalate", "u2", &testUpdate{onComplete: func(v any, err error) {
				require.NoError(t, err)
				decision = v.(protocol.Decision)
			}}, map[string]string{"reason": "enough", "by": "lee"})
		}, decideAfter+time.Minute)
		env.ExecuteWorkflow(scriptLoop, repeat(5, "Code", "same"))
		res := result(t, env)
		require.Error(t, malformed)
		assert.Contains(t, malformed.Error(), "malformed JSON")
		assert.True(t, res.Escalated)
		assert.Equal(t, "enough", res.Reason)
		assert.Equal(t, protocol.Decision{Action: "escalate", Reason: "enough", By: "lee", HaltSeq: 1}, decision)
	})
}

// testUpdate adapts callbacks to the test environment's UpdateCallbacks.
type testUpdate struct {
	onReject   func(error)
	onComplete func(any, error)
}

func (u *testUpdate) Accept() {}
func (u *testUpdate) Reject(err error) {
	if u.onReject != nil {
		u.onReject(err)
	}
}
func (u *testUpdate) Complete(v any, err error) {
	if u.onComplete != nil {
		u.onComplete(v, err)
	}
}
