package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// TestPanickingHooks (issue 22 item 7): a NodeName or GuardWorkflow hook
// that panics is recovered, as a ResultHook is, instead of failing every
// workflow task: the call is named by its type, the execution is guarded.
func TestPanickingHooks(t *testing.T) {
	tests := []struct {
		name string
		opts interceptor.Options
	}{
		{"NodeName", interceptor.Options{NodeName: func(interceptor.Call) string { panic("a bug in NodeName") }}},
		{"GuardWorkflow", interceptor.Options{GuardWorkflow: func(*workflow.Info) bool { panic("a bug in GuardWorkflow") }}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, tt.opts)
			env.ExecuteWorkflow(scriptLoop, []turn{{Node: "Plan", Output: "a plan"}, {Node: "Code", Output: "a patch"}})
			result(t, env)
			st := status(t, env)
			require.Len(t, st.Nodes, 2, "guarded, each call named by its type")
			assert.Equal(t, "Plan", st.Nodes[0].Node)
			assert.Equal(t, "Code", st.Nodes[1].Node)
		})
	}
}
