package interceptor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// TestResumeExtendDurations: "extend" takes durations in the policy file's
// form; a bare number is refused with the field named, never read as
// nanoseconds.
func TestResumeExtendDurations(t *testing.T) {
	// Research has a 25m runtime budget and each call takes ten minutes:
	// the third call trips node_runtime at 30m.
	opts := interceptor.Options{Nodes: map[string]interceptor.NodeOptions{"Research": {MaxRuntime: 25 * time.Minute}}}
	give := []turn{{Node: "Research"}, {Node: "Plan", Output: "1"}, {Node: "Research"}, {Node: "Plan", Output: "2"}, {Node: "Research"}, {Node: "Plan", Output: "3"}, {Node: "Research"}}
	tests := []struct {
		name         string
		payload      any
		wantEsc      bool
		wantRejected string
	}{
		{"duration string raises the limit", map[string]any{"extend": map[string]any{"maxNodeRuntime": "20m"}}, false, ""},
		{"a bare number is refused", map[string]any{"extend": map[string]any{"maxNodeRuntime": 1200}}, true,
			`malformed JSON: extend.maxNodeRuntime: want a duration string such as "90s" or "10m", got 1200`},
		{"a bad string is refused", map[string]any{"extend": map[string]any{"maxNodeRuntime": "20 minutes"}}, true,
			`extend.maxNodeRuntime: "20 minutes" is not a duration`},
		{"a Go ResumeRequest sends strings", protocol.ResumeRequest{Extend: &detect.Extension{MaxNodeRuntime: 20 * time.Minute}}, false, ""},
		// Guard version 12: limits are summed without saturation, so an
		// extension past its ceiling is refused, not stored (+Inf broke
		// continue-as-new; a wrapped count switched its budget off).
		{"more than a year is refused", map[string]any{"extend": map[string]any{"maxNodeRuntime": "9000h"}}, true,
			`extend.maxNodeRuntime is 9000h0m0s, at most 8760h0m0s in one resume`},
		{"a huge count is refused", map[string]any{"extend": map[string]any{"maxCallsPerNode": 9e18}}, true,
			`extend.maxCallsPerNode is 9e+18, at most 1000000 in one resume`},
		{"a huge cost is refused", map[string]any{"extend": map[string]any{"maxCost": 1e308}}, true,
			`extend.maxCost is 1e+308, at most 1e+12 in one resume`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, opts)
			env.OnActivity("Research", mock.Anything, mock.Anything, mock.Anything).After(10 * time.Minute).Return(
				func(_ context.Context, _ turn, i int) (agentResult, error) {
					return agentResult{Output: fmt.Sprint("findings ", i)}, nil
				})
			var afterResume protocol.Status
			env.RegisterDelayedCallback(func() { env.SignalWorkflow("resume", tt.payload) }, 5*decideAfter)
			env.RegisterDelayedCallback(func() {
				afterResume = status(t, env)
				env.SignalWorkflow("escalate", nil) // ends a pause the resume did not end
			}, 6*decideAfter)
			env.ExecuteWorkflow(scriptLoop, give)
			res := result(t, env)
			assert.Equal(t, tt.wantEsc, res.Escalated)
			if tt.wantRejected == "" {
				assert.Nil(t, afterResume.LastRejected)
				assert.Equal(t, len(give), res.Calls, "every turn ran, the fourth research call within the raised limit")
				return
			}
			require.NotNil(t, afterResume.LastRejected)
			assert.Contains(t, afterResume.LastRejected.Reason, tt.wantRejected)
		})
	}
}

func TestResumeRequestJSON(t *testing.T) {
	give := protocol.ResumeRequest{Reason: "ok", Extend: &detect.Extension{MaxNodeRuntime: 90 * time.Second, MaxCycleIterations: 2}}
	data, err := json.Marshal(give)
	require.NoError(t, err)
	assert.JSONEq(t, `{"reason":"ok","extend":{"maxNodeRuntime":"1m30s","maxCycleIterations":2}}`, string(data))
	var got protocol.ResumeRequest
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, give, got)
}
