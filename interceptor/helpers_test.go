package interceptor_test

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/scripted"
)

// The scripted loop and its activities live in internal/scripted, shared
// with the real-server tests of the worker module.
type (
	turn        = scripted.Turn
	agentResult = scripted.AgentResult
	loopResult  = scripted.LoopResult
)

var (
	scriptLoop     = scripted.ScriptLoop
	continuingLoop = scripted.ContinuingLoop
	twoBranches    = scripted.TwoBranches
	nodes          = scripted.Nodes
	repeat         = scripted.Repeat
	codeVerify     = scripted.CodeVerify
	registerScript = scripted.Register
)

// newEnv returns a test environment running scriptLoop with the guard.
func newEnv(t *testing.T, opts interceptor.Options) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	return newEnvWithMetrics(t, opts, nil)
}

// newAgentEnv is newEnv with the workflow wf and the agent activity that
// guidedLoop calls ("HeedfulAgent").
func newAgentEnv(t *testing.T, opts interceptor.Options, wf, agent any) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv(t, opts)
	env.RegisterWorkflow(wf)
	env.RegisterActivityWithOptions(agent, activity.RegisterOptions{Name: "HeedfulAgent"})
	return env
}

// newEnvWithMetrics is newEnv recording metrics through h (nil: none).
func newEnvWithMetrics(t *testing.T, opts interceptor.Options, h client.MetricsHandler) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger())
	if h != nil {
		s.SetMetricsHandler(h)
	}
	env := s.NewTestWorkflowEnvironment()
	g, err := interceptor.New(opts)
	require.NoError(t, err)
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})
	registerScript(env)
	env.SetTestTimeout(30 * time.Second)
	return env
}

// status queries the guard's status.
func status(t *testing.T, env *testsuite.TestWorkflowEnvironment) protocol.Status {
	t.Helper()
	v, err := env.QueryWorkflow(protocol.DefaultStatusQuery)
	require.NoError(t, err)
	var s protocol.Status
	require.NoError(t, v.Get(&s))
	return s
}

// result returns the workflow's result, failing on a workflow error.
func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) loopResult {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var r loopResult
	require.NoError(t, env.GetWorkflowResult(&r))
	return r
}

// quietLogger keeps test output to errors.
func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// statusThen reads the workflow's status after d of workflow time, then
// runs decide (a human's answer to the halt): the returned status, filled
// in when the callback runs, is what a test asserts of the halt answered.
func statusThen(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration, decide func()) *protocol.Status {
	t.Helper()
	halted := new(protocol.Status)
	env.RegisterDelayedCallback(func() {
		*halted = status(t, env)
		decide()
	}, d)
	return halted
}
