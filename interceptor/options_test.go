package interceptor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
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
