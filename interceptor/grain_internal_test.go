package interceptor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// TestGrainToolCall: the tool-call grain raises the default budgets of
// LLM↔tool loops (the budget table's ToolCalls column); a field set in
// Options still wins; an unknown grain is an OptionError.
func TestGrainToolCall(t *testing.T) {
	tests := []struct {
		name string
		give Options
		want map[string]float64
	}{
		{name: "turn (zero value)", give: Options{}, want: map[string]float64{"maxCallsPerNode": 10, "maxCycleIterations": 8, "maxEdgeWithoutProgress": 5, "maxTotalCalls": 1000}},
		{name: "tool call", give: Options{Grain: GrainToolCall}, want: map[string]float64{"maxCallsPerNode": 150, "maxCycleIterations": 150, "maxEdgeWithoutProgress": 30, "maxTotalCalls": 1000}},
		{name: "tool call, a field set", give: Options{Grain: GrainToolCall, MaxCallsPerNode: 40}, want: map[string]float64{"maxCallsPerNode": 40, "maxCycleIterations": 150}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := buildConfig(tt.give)
			require.NoError(t, err)
			got := map[string]float64{}
			for _, b := range detect.Budgets() {
				if _, ok := tt.want[b.JSON]; ok {
					got[b.JSON] = b.Value(&c.Policy)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
	_, _, err := buildConfig(Options{Grain: "tools"})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "Grain", oe.Field)
}
