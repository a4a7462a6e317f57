package interceptor_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
)

// maxWindow is detect.MaxWindow, the longest history the guard keeps.
const maxWindow = 256

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
		{"window over the cap", interceptor.Options{Window: maxWindow + 1}, "Window"},
		{"threshold over the cap", interceptor.Options{Window: maxWindow, RepeatThreshold: maxWindow + 44}, "RepeatThreshold"},
		{"oscillation over the cap", interceptor.Options{Window: maxWindow, OscillationPeriods: 300}, "OscillationPeriods"},
		{"oscillation product overflows", interceptor.Options{OscillationPeriods: 1 << 62, MaxOscillationPeriod: 4}, "OscillationPeriods"},
		{"repeat threshold of one", interceptor.Options{RepeatThreshold: 1}, "RepeatThreshold"},
		{"error threshold of one", interceptor.Options{ErrorRepeatThreshold: 1}, "ErrorRepeatThreshold"},
		{"stall of one", interceptor.Options{StallIterations: 1}, "StallIterations"},
		{"reserved query name", interceptor.Options{StatusQuery: "__status"}, "StatusQuery"},
		{"reserved update name", interceptor.Options{ResumeUpdate: "__resume"}, "ResumeUpdate"},
		{"halt signal timeout too short", interceptor.Options{HaltSignalTimeout: time.Millisecond}, "HaltSignalTimeout"},
		{"supervisor with spaces", interceptor.Options{SupervisorWorkflowID: "boss "}, "SupervisorWorkflowID"},
		{"memo key not UTF-8", interceptor.Options{MemoKey: "guard\xff"}, "MemoKey"},
		{"signal not UTF-8", interceptor.Options{HaltSignal: "halt\xff"}, "HaltSignal"},
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
	p, err := interceptor.NewPlugin(interceptor.Options{OnHalt: interceptor.OnHaltFail})
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
