package interceptor_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

func TestNewValidatesOptions(t *testing.T) {
	tests := []struct {
		name      string
		give      interceptor.Options
		wantField string
	}{
		{"negative threshold", interceptor.Options{RepeatThreshold: -1}, "RepeatThreshold"},
		{"negative budget", interceptor.Options{MaxCycleIterations: -3}, "MaxCycleIterations"},
		{"negative duration", interceptor.Options{MaxCycleRuntime: -time.Second}, "MaxCycleRuntime"},
		{"negative cost", interceptor.Options{MaxCost: -1}, "MaxCost"},
		{"window below threshold", interceptor.Options{Window: 4, RepeatThreshold: 5}, "Window"},
		{"window below oscillation", interceptor.Options{Window: 5}, "Window"},
		{"one oscillation period", interceptor.Options{OscillationPeriods: 1}, "OscillationPeriods"},
		{"blank signal name", interceptor.Options{ResumeSignal: "  "}, "ResumeSignal"},
		{"clashing signal names", interceptor.Options{EscalateSignal: "resume"}, "EscalateSignal"},
		{"unknown action", interceptor.Options{OnHalt: "explode"}, "OnHalt"},
		{"unknown timeout action", interceptor.Options{OnPauseTimeout: "retry"}, "OnPauseTimeout"},
		{"bad node limit", interceptor.Options{Nodes: map[string]interceptor.NodeOptions{"Verify": {MaxCalls: -1}}}, "Nodes[Verify].MaxCalls"},
		{"bad field path", interceptor.Options{Nodes: map[string]interceptor.NodeOptions{"Verify": {MetricField: "a..b"}}}, "Nodes[Verify].MetricField[0]"},
		{"half an edge", interceptor.Options{Graph: []interceptor.Edge{{From: "Code"}}}, "Graph[0]"},

		// Issue 30: each of these was accepted, and broke or silently
		// weakened the guard.
		{"infinite cost", interceptor.Options{MaxCost: math.Inf(1)}, "MaxCost"},
		{"NaN cost", interceptor.Options{MaxCost: math.NaN()}, "MaxCost"},
		{"minus infinite cost", interceptor.Options{MaxCost: math.Inf(-1)}, "MaxCost"},
		{"infinite cycle cost", interceptor.Options{MaxCycleCost: math.Inf(1)}, "MaxCycleCost"},
		{"NaN cycle cost", interceptor.Options{MaxCycleCost: math.NaN()}, "MaxCycleCost"},
		{"node name with spaces", interceptor.Options{Nodes: map[string]interceptor.NodeOptions{" Verify": {MaxCalls: 2}}}, "Nodes"},
		{"edge end with spaces", interceptor.Options{Graph: []interceptor.Edge{{From: "Code", To: "Verify "}}}, "Graph[0]"},
		{"window over the cap", interceptor.Options{Window: detect.MaxWindow + 1}, "Window"},
		{"threshold over the cap", interceptor.Options{Window: detect.MaxWindow, RepeatThreshold: detect.MaxWindow + 44}, "RepeatThreshold"},
		{"oscillation over the cap", interceptor.Options{Window: detect.MaxWindow, OscillationPeriods: 300}, "OscillationPeriods"},
		{"oscillation product overflows", interceptor.Options{OscillationPeriods: 1 << 62, MaxOscillationPeriod: 4}, "OscillationPeriods"},
		{"repeats the loop rule cannot keep", interceptor.Options{Window: 100, RepeatThreshold: 97}, "RepeatThreshold"},
		{"periods the loop rule cannot keep", interceptor.Options{Window: 100, OscillationPeriods: 49}, "OscillationPeriods"},
		{"errors the loop rule cannot keep", interceptor.Options{Window: 100, ErrorRepeatThreshold: 96}, "ErrorRepeatThreshold"},
		{"repeat threshold of one", interceptor.Options{RepeatThreshold: 1}, "RepeatThreshold"},
		{"error threshold of one", interceptor.Options{ErrorRepeatThreshold: 1}, "ErrorRepeatThreshold"},
		{"stall of one", interceptor.Options{StallIterations: 1}, "StallIterations"},
		{"reserved query name", interceptor.Options{StatusQuery: "__status"}, "StatusQuery"},
		{"reserved update name", interceptor.Options{ResumeUpdate: "__resume"}, "ResumeUpdate"},
		{"halt signal timeout too short", interceptor.Options{HaltSignalTimeout: time.Millisecond}, "HaltSignalTimeout"},
		{"supervisor with spaces", interceptor.Options{SupervisorWorkflowID: "boss "}, "SupervisorWorkflowID"},
		{"memo key not UTF-8", interceptor.Options{MemoKey: "guard\xff"}, "MemoKey"},
		{"signal not UTF-8", interceptor.Options{HaltSignal: "halt\xff"}, "HaltSignal"},
		{"workflow type not UTF-8", interceptor.Options{Workflows: []string{"Agent", "Agent\xff"}}, "Workflows[1]"},
		{"path not UTF-8", interceptor.Options{IgnoreFields: []string{"at", "a\xffb"}}, "IgnoreFields[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := interceptor.New(tt.give)
			require.Error(t, err)
			assert.Nil(t, g)
			var oe *interceptor.OptionError
			require.True(t, errors.As(err, &oe), "want an *OptionError, got %T", err)
			assert.Equal(t, tt.wantField, oe.Field)
			assert.Contains(t, err.Error(), tt.wantField)
		})
	}
}

func TestZeroOptionsWork(t *testing.T) {
	g, err := interceptor.New(interceptor.Options{})
	require.NoError(t, err)
	assert.NotNil(t, g)
	p, err := interceptor.NewPlugin(interceptor.Options{})
	require.NoError(t, err)
	assert.Equal(t, interceptor.PluginName, p.Name())
}

func TestPluginGuardsLikeTheInterceptor(t *testing.T) {
	p, err := interceptor.NewPlugin(interceptor.Options{OnHalt: protocol.OnHaltFail})
	require.NoError(t, err)
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger())
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Plugins: []worker.Plugin{p}})
	registerScript(env)
	env.ExecuteWorkflow(scriptLoop, repeat(5, "Code", "same"))
	res := result(t, env)
	assert.True(t, res.Escalated, "the plugin's guard escalates the stall")
	assert.Equal(t, 4, res.Calls)
}

// TestExtremeOptionsRun: a guarded workflow runs under accepted options
// at their extremes (the longest window with every threshold at it,
// budgets out of reach, the shortest durations, warnings without end,
// long names): its first task and the rest run without an encode failure
// or a panic, and a stuck loop under them is halted when they let it be.
func TestExtremeOptionsRun(t *testing.T) {
	huge := interceptor.Options{
		Window: detect.MaxWindow, RepeatThreshold: 2 * detect.MaxLoopPeriod, ErrorRepeatThreshold: 2*detect.MaxLoopPeriod - 1,
		StallIterations: detect.MaxWindow, NoImproveIterations: detect.MaxWindow,
		OscillationPeriods: 2, MaxOscillationPeriod: detect.MaxWindow / 2,
		MaxCallsPerNode: math.MaxInt, MaxTotalCalls: math.MaxInt, MaxCycleIterations: math.MaxInt,
		MaxEdgeWithoutProgress: math.MaxInt, MaxCost: math.MaxFloat64, MaxCycleCost: math.MaxFloat64,
		MaxNodeRuntime: math.MaxInt64, MaxCycleRuntime: math.MaxInt64,
		PauseTimeout: math.MaxInt64, HaltSignalTimeout: math.MaxInt64, MaxPayloadBytes: math.MaxInt,
		Warnings: 1, OnHalt: protocol.OnHaltFail,
	}
	tiny := interceptor.Options{
		MaxNodeRuntime: 1, MaxCycleRuntime: 1, PauseTimeout: 1, OnPauseTimeout: interceptor.TimeoutResume,
		HaltSignalTimeout: time.Second, MaxCost: math.SmallestNonzeroFloat64, MaxCycleCost: math.SmallestNonzeroFloat64,
		MaxPayloadBytes: 1,
	}
	long := strings.Repeat("n", 300)
	names := interceptor.Options{
		MemoKey: long, ResumeSignal: "reprendre·" + long, EscalateSignal: "escalader", HaltSignal: "arrêter",
		HaltedSignal: "arrêté", StatusQuery: "état", ResumeUpdate: "reprendre", EscalateUpdate: "escalader",
		SupervisorWorkflowID: "nobody-" + long,
		IgnoreFields:         []string{"at", "a.b.c.d.e.f", long},
		Nodes: map[string]interceptor.NodeOptions{
			"Nowhere": {MaxCalls: math.MaxInt, MaxRuntime: 1, Exempt: true, MetricField: "failing", CostField: "cost"},
			"Code":    {IgnoreFields: []string{long}, ProgressFields: []string{"output"}, MetricField: "failing", CostField: "cost"},
		},
		Graph:    []interceptor.Edge{{From: "Code", To: "Nowhere"}, {From: "Code", To: "Code"}, {From: "Code", To: "Code"}},
		Warnings: 2, OnHalt: protocol.OnHaltFail,
	}
	tests := []struct {
		name      string
		opts      interceptor.Options
		calls     int
		escalated bool
	}{
		{"the longest window, budgets out of reach", huge, 600, true},
		{"the shortest durations, resumed at once", tiny, 30, false},
		// A year, not math.MaxInt64: the test environment fails a workflow
		// whose only timer lies 200 years ahead ("deadline exceeded"), as it
		// fails one blocked forever; the server caps timers at 250 years.
		{"a year's pause, timed out", interceptor.Options{PauseTimeout: 365 * 24 * time.Hour, HaltSignalTimeout: 365 * 24 * time.Hour}, 10, true},
		{"warnings without end, observed", interceptor.Options{Grain: interceptor.GrainToolCall, Warnings: math.MaxInt, OnHalt: protocol.OnHaltObserve, CountRepeats: true}, 200, false},
		{"long and unknown names", names, 40, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, tt.opts)
			env.ExecuteWorkflow(scriptLoop, repeat(tt.calls, "Code", "same"))
			res := result(t, env)
			assert.Equal(t, tt.escalated, res.Escalated)
			if !tt.escalated {
				assert.Equal(t, tt.calls, res.Calls, "every call ran")
			}
		})
	}
}
