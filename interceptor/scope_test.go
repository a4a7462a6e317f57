package interceptor_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// TestWorkflowsScope: Options.Workflows guards the named workflow types
// only; the zero value guards every type.
func TestWorkflowsScope(t *testing.T) {
	tests := []struct {
		name        string
		give        interceptor.Options
		wantGuarded bool
	}{
		{"zero value guards every type", interceptor.Options{}, true},
		{"named type is guarded", interceptor.Options{Workflows: []string{"AgentLoop", "ScriptLoop"}}, true},
		{"other types are not", interceptor.Options{Workflows: []string{"AgentLoop"}}, false},
		{"names are exact", interceptor.Options{Workflows: []string{"scriptloop"}}, false},
		{
			"GuardWorkflow must agree too",
			interceptor.Options{Workflows: []string{"ScriptLoop"}, GuardWorkflow: func(*workflow.Info) bool { return false }},
			false,
		},
		{
			"GuardWorkflow alone still works",
			interceptor.Options{GuardWorkflow: func(i *workflow.Info) bool { return i.WorkflowType.Name == "ScriptLoop" }},
			true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, tt.give)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow("escalate", nil) }, decideAfter)
			env.ExecuteWorkflow(scriptLoop, repeat(6, "Code", "same"))
			res := result(t, env)
			st := status(t, env)
			if tt.wantGuarded {
				assert.True(t, res.Escalated, "the repeated output halts a guarded loop")
				assert.Equal(t, interceptor.StateEscalated, st.State)
				return
			}
			assert.False(t, res.Escalated)
			assert.Equal(t, 6, res.Calls, "an unguarded loop runs to its end")
			assert.Equal(t, interceptor.StateDisabled, st.State)
		})
	}
}

func TestWorkflowsScopeValidation(t *testing.T) {
	for _, give := range [][]string{{"AgentLoop", ""}, {"AgentLoop", " AgentLoop"}} {
		_, err := interceptor.New(interceptor.Options{Workflows: give})
		var oe *interceptor.OptionError
		require.True(t, errors.As(err, &oe), "want an *OptionError for %q, got %v", give, err)
		assert.Equal(t, "Workflows[1]", oe.Field)
	}
}
