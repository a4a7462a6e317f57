package interceptor_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
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
				assert.Equal(t, protocol.StateEscalated, st.State)
				return
			}
			assert.False(t, res.Escalated)
			assert.Equal(t, 6, res.Calls, "an unguarded loop runs to its end")
			assert.Equal(t, protocol.StateDisabled, st.State)
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

// TestCheckWorkflows: a name in Options.Workflows that no registered
// workflow has is an error naming it, with the registered name that
// differs only in case; functions are named as the SDK names them.
func TestCheckWorkflows(t *testing.T) {
	tests := []struct {
		name       string
		give       []string
		registered []any
		want       []string // substrings of the error; nil: no error
	}{
		{"every workflow guarded", nil, []any{scriptLoop}, nil},
		{"function registered", []string{"ScriptLoop"}, []any{scriptLoop}, nil},
		{"name registered", []string{"ToolAgent"}, []any{"ToolAgent", scriptLoop}, nil},
		{"case typo", []string{"toolAgent"}, []any{"ToolAgent"}, []string{"Workflows[0]", `"toolAgent"`, `did you mean "ToolAgent"`}},
		{"unknown name", []string{"ScriptLoop", "Agent"}, []any{scriptLoop}, []string{"Workflows[1]", `"Agent"`, "registered: ScriptLoop", "not be guarded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := interceptor.CheckWorkflows(interceptor.Options{Workflows: tt.give}, tt.registered...)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			var oe *interceptor.OptionError
			assert.ErrorAs(t, err, &oe)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := interceptor.WorkflowTypeName(42)
	assert.Error(t, err, "a workflow is a function or a name")
}

// TestNearMissIsLogged: a workflow left unguarded because Options.Workflows
// names its type in another case says so in the log.
func TestNearMissIsLogged(t *testing.T) {
	logs := &warnLog{}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(logs)
	env := s.NewTestWorkflowEnvironment()
	g, err := interceptor.New(interceptor.Options{Workflows: []string{"scriptloop"}})
	require.NoError(t, err)
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})
	registerScript(env)
	env.ExecuteWorkflow(scriptLoop, repeat(2, "Code", "same"))
	require.NoError(t, env.GetWorkflowError())
	assert.Contains(t, logs.text(), "this workflow is not guarded")
	assert.Contains(t, logs.text(), "Workflows scriptloop")
}

// warnLog is a log.Logger that keeps the warnings.
type warnLog struct {
	mu    sync.Mutex
	lines []string
}

func (*warnLog) Debug(string, ...any) {}
func (*warnLog) Info(string, ...any)  {}
func (*warnLog) Error(string, ...any) {}
func (w *warnLog) Warn(msg string, keyvals ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprint(msg, keyvals))
}

func (w *warnLog) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}
