package workflows

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
)

// decideAfter is when the test's human looks at a halted loop: the agents
// answer at once in the test environment, so any halted loop is paused by
// then, and any other has finished.
const decideAfter = time.Hour

// wantHalt is where each halted scenario must halt (see the table in
// scenarios.go): the detector, the node it blames, and the loop's turn
// (LoopResult.Iterations) whose call was paused.
var wantHalt = map[string]struct {
	detector   detect.Detector
	node       string
	iterations []int // acceptable values
}{
	"identical-patch":    {detect.DetectorIdenticalOutput, NodeCode, []int{3}},
	"same-failing-tests": {detect.DetectorNoImprovement, NodeVerify, []int{5}},
	"oscillating":        {detect.DetectorOutputOscillation, NodeVerify, []int{5}},
	"repeated-error":     {detect.DetectorRepeatedError, NodeVerify, []int{5}},
	"budget":             {detect.DetectorCycleIterations, NodeCode, []int{9}},
	"planner-research":   {detect.DetectorOutputOscillation, NodeResearch, []int{5}},
	"child-stalled":      {detect.DetectorIdenticalOutput, NodeIteration, []int{4}},
}

// runGuarded runs a workflow with the guard; a human escalates whatever
// halt is in force at decideAfter. It returns the loop's result and the
// guard's status at the halt (nil if it never halted).
func runGuarded(t *testing.T, opts interceptor.Options, workflowType string, in LoopInput) (LoopResult, *interceptor.Status) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))))
	env := s.NewTestWorkflowEnvironment()
	guard, err := interceptor.New(opts)
	require.NoError(t, err)
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{guard}})
	Register(env)

	var halted *interceptor.Status
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(interceptor.DefaultStatusQuery)
		require.NoError(t, err)
		var st interceptor.Status
		require.NoError(t, v.Get(&st))
		halted = &st
		env.SignalWorkflow(interceptor.DefaultEscalateSignal, interceptor.EscalateRequest{Reason: "not converging", By: "test"})
	}, decideAfter)
	env.ExecuteWorkflow(workflowType, in)

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res LoopResult
	require.NoError(t, env.GetWorkflowResult(&res))
	return res, halted
}

// TestScenariosWithGuard runs every scenario with the guard set up with
// GuardOptions: each one must complete or halt as Scenarios says; a human
// then escalates the halt and the loop ends with Outcome escalated.
func TestScenariosWithGuard(t *testing.T) {
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			res, halted := runGuarded(t, GuardOptions(), sc.Workflow, sc.Input)
			if sc.Want == WantCompleted {
				require.Nil(t, halted, "the guard must not halt it")
				assert.Equal(t, OutcomeCompleted, res.Outcome)
				return
			}
			require.NotNil(t, halted, "the guard must halt it")
			require.Equal(t, interceptor.StateHalted, halted.State)
			require.NotNil(t, halted.Halt)
			want := wantHalt[sc.Name]
			t.Logf("%s: %s/%s at %s, turn %d: %s", sc.Name, halted.Halt.HaltReason, halted.Halt.Detector, halted.Halt.Node, res.Iterations, halted.Halt.Message)
			assert.Equal(t, sc.WantReason, halted.Halt.HaltReason)
			assert.Equal(t, want.detector, halted.Halt.Detector)
			assert.Equal(t, want.node, halted.Halt.Node)

			assert.Equal(t, OutcomeEscalated, res.Outcome)
			assert.Contains(t, want.iterations, res.Iterations)
			require.NotNil(t, res.Escalation)
			assert.Equal(t, "not converging", res.Escalation.Reason)
			assert.Equal(t, "test", res.Escalation.By)
			assert.Equal(t, sc.WantReason, res.Escalation.Halt.HaltReason)
			assert.Equal(t, want.node, res.Escalation.Halt.Node)
			assert.NotEmpty(t, res.Final, "the best result so far")
		})
	}
}

// TestGuardOptionsMatter: without the sample rules the guard gets the
// scenarios wrong, so each rule in GuardOptions is needed.
func TestGuardOptionsMatter(t *testing.T) {
	t.Run("poller not exempt", func(t *testing.T) {
		opts := GuardOptions()
		delete(opts.Nodes, NodeCheckStatus)
		res, halted := runGuarded(t, opts, WorkflowPolling, LoopInput{Scenario: "polling"})
		// The poller sleeps between polls: it is waiting on the world, not
		// stalled, so only its call budget bounds it.
		require.NotNil(t, halted, "a poller that is not exempt is bounded by its budget")
		assert.Equal(t, interceptor.ReasonBudgetExceeded, halted.Halt.HaltReason)
		assert.Equal(t, NodeCheckStatus, halted.Halt.Node)
		assert.Equal(t, OutcomeEscalated, res.Outcome)
	})
	t.Run("timestamp not ignored", func(t *testing.T) {
		opts := GuardOptions()
		opts.IgnoreFields = nil
		_, halted := runGuarded(t, opts, WorkflowCoderVerifier, LoopInput{Scenario: "identical-patch"})
		require.NotNil(t, halted)
		// Every output differs by its timestamp, which the guard masks with
		// zero options: the identical patches are caught at the coder as
		// if the timestamp were ignored.
		assert.Equal(t, detect.DetectorIdenticalOutput, halted.Halt.Detector)
		assert.Equal(t, NodeCode, halted.Halt.Node)
	})
	t.Run("no metric", func(t *testing.T) {
		opts := GuardOptions()
		opts.Nodes[NodeVerify] = interceptor.NodeOptions{CostField: "cost"}
		_, halted := runGuarded(t, opts, WorkflowCoderVerifier, LoopInput{Scenario: "same-failing-tests"})
		require.NotNil(t, halted)
		// Nothing reads the failing count: every result is new, so only the
		// iteration budget stops the loop, four turns later.
		assert.Equal(t, interceptor.ReasonBudgetExceeded, halted.Halt.HaltReason)
		assert.Equal(t, detect.DetectorCycleIterations, halted.Halt.Detector)
	})
}
