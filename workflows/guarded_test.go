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

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// decideAfter is when the test's human looks at a halted loop: the agents
// answer at once in the test environment, so any halted loop is paused by
// then, and any other has finished.
const decideAfter = time.Hour

// wantHalt is where each halted scenario must halt (see the table in
// scenarios.go): the detector, the node it blames, and the loop's turn
// (LoopResult.Iterations) whose call was paused, after the one warning
// GuardOptions gives (a warned loop's detector starts over, so the period
// is named from the call after the warning).
var wantHalt = map[string]struct {
	detector   detect.Detector
	node       string
	iterations []int // acceptable values
}{
	"identical-patch":    {detect.DetectorIdenticalOutput, NodeVerify, []int{6}},
	"same-failing-tests": {detect.DetectorNoImprovement, NodeVerify, []int{9}},
	"oscillating":        {detect.DetectorOutputOscillation, NodeVerify, []int{9}},
	"repeated-error":     {detect.DetectorRepeatedError, NodeVerify, []int{9}},
	"budget":             {detect.DetectorCycleIterations, NodeCode, []int{9}},
	"planner-research":   {detect.DetectorOutputOscillation, NodeResearch, []int{9}},
	"child-stalled":      {detect.DetectorIdenticalOutput, NodeIteration, []int{7}},
}

// guardedRun is what became of a guarded run.
type guardedRun struct {
	res LoopResult
	// halted is the guard's status when the human looked, if halted then;
	// final its status once the workflow completed.
	halted, final *protocol.Status
}

// runGuarded runs a workflow with the guard; a human escalates whatever
// halt is in force at decideAfter, or resumes it with guidance if given.
func runGuarded(t *testing.T, opts interceptor.Options, workflowType string, in LoopInput, guidance ...string) guardedRun {
	t.Helper()
	env, status := guardedEnv(t, opts)
	var r guardedRun
	env.RegisterDelayedCallback(func() {
		r.halted = status()
		if len(guidance) > 0 {
			env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{Reason: "try this", By: "test", Guidance: guidance[0]})
			return
		}
		env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{Reason: "not converging", By: "test"})
	}, decideAfter)
	executeWorkflow(t, env, workflowType, in, &r.res)
	r.final = status()
	return r
}

// guardedEnv is a test environment with the samples registered and the
// guard under opts, and the guard's status query. Interceptors in before
// come first in the worker's list, so that their outbound interceptors
// are the guard's Next (a workflow's outbound chain is built from the
// inside out, in the list's order): they see the calls the guard lets
// through, with the notice it wrote in their headers.
func guardedEnv(t *testing.T, opts interceptor.Options, before ...sdkinterceptor.WorkerInterceptor) (*testsuite.TestWorkflowEnvironment, func() *protocol.Status) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	guard, err := interceptor.New(opts)
	require.NoError(t, err)
	env.SetWorkerOptions(worker.Options{Interceptors: append(before, guard)})
	Register(env)
	status := func() *protocol.Status {
		v, err := env.QueryWorkflow(protocol.DefaultStatusQuery)
		require.NoError(t, err)
		var st protocol.Status
		require.NoError(t, v.Get(&st))
		return &st
	}
	return env, status
}

// executeWorkflow runs workflowType to completion, without error, and
// reads its result into valuePtr.
func executeWorkflow(t *testing.T, env *testsuite.TestWorkflowEnvironment, workflowType string, in, valuePtr any) {
	t.Helper()
	env.ExecuteWorkflow(workflowType, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, env.GetWorkflowResult(valuePtr))
}

// TestScenariosWithGuard runs every scenario with the guard set up with
// GuardOptions: each one must complete or halt as Scenarios says; a human
// then escalates the halt and the loop ends with Outcome escalated. The
// steered scenarios complete: the agent heeds the warning, the reviewer's
// guidance, or the human's.
func TestScenariosWithGuard(t *testing.T) {
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			var guidance []string
			if sc.Steer == SteerHuman {
				guidance = append(guidance, sc.Guidance)
			}
			r := runGuarded(t, GuardOptions(), sc.Workflow, sc.Input, guidance...)
			res, halted := r.res, r.halted
			if sc.Want == WantCompleted {
				assert.Equal(t, OutcomeCompleted, res.Outcome)
				checkSteered(t, sc, r)
				return
			}
			require.NotNil(t, halted, "the guard must halt it")
			require.Equal(t, protocol.StateHalted, halted.State)
			require.NotNil(t, halted.Halt)
			want := wantHalt[sc.Name]
			t.Logf("%s: %s/%s at %s, turn %d: %s", sc.Name, halted.Halt.HaltReason, halted.Halt.Detector, halted.Halt.Node, res.Iterations, halted.Halt.Message)
			assert.Equal(t, sc.WantReason, halted.Halt.HaltReason)
			assert.Equal(t, want.detector, halted.Halt.Detector)
			assert.Equal(t, want.node, halted.Halt.Node)
			// Budgets halt at once; a detector's halt lists the warning the
			// agent ignored.
			wantWarnings := 1
			if sc.WantReason == protocol.ReasonBudgetExceeded {
				wantWarnings = 0
			}
			assert.Len(t, halted.Halt.Warnings, wantWarnings)

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

// checkSteered checks how a completed scenario got there: with no halt,
// or with the one halt its Steer answers, and the agent's patch saying
// what it heeded.
func checkSteered(t *testing.T, sc Scenario, r guardedRun) {
	t.Helper()
	st := r.final
	require.NotNil(t, st)
	switch sc.Steer {
	case "":
		assert.Nil(t, r.halted, "the guard must not halt it")
		assert.Zero(t, st.Warnings, "nor warn it")
		return
	case SteerWarning:
		assert.Nil(t, r.halted, "the agent heeds the warning: no halt")
		assert.Zero(t, st.Halts)
		assert.Equal(t, 1, st.Warnings)
		assert.Contains(t, r.res.Final, "cap the retry backoff")
	case SteerReviewer:
		assert.Nil(t, r.halted, "the reviewer answers the halt: no human")
		assert.Equal(t, 1, st.Halts)
		require.NotNil(t, st.LastDecision)
		assert.Equal(t, interceptor.HandlerBy, st.LastDecision.By)
		assert.Equal(t, activities.OperatorGuidance, st.LastDecision.Guidance)
	case SteerHuman:
		require.NotNil(t, r.halted, "a human answers the halt")
		require.NotNil(t, r.halted.Halt)
		assert.Equal(t, sc.WantReason, r.halted.Halt.HaltReason)
		assert.Len(t, r.halted.Halt.Warnings, 1, "the warning it ignored")
		require.NotNil(t, st.LastDecision)
		assert.Equal(t, "test", st.LastDecision.By)
		assert.Equal(t, sc.Guidance, st.LastDecision.Guidance)
	default:
		t.Fatalf("unknown Steer %q", sc.Steer)
	}
	t.Logf("%s: completed at turn %d, %d halts, %d warnings", sc.Name, r.res.Iterations, st.Halts, st.Warnings)
}

// TestGuardOptionsMatter: without the sample rules the guard gets the
// scenarios wrong, so each rule in GuardOptions is needed.
func TestGuardOptionsMatter(t *testing.T) {
	t.Run("poller not exempt", func(t *testing.T) {
		opts := GuardOptions()
		delete(opts.Nodes, NodeCheckStatus)
		r := runGuarded(t, opts, WorkflowPolling, LoopInput{Scenario: "polling"})
		res, halted := r.res, r.halted
		// The poller sleeps between polls: it is waiting on the world, not
		// stalled, so only its call budget bounds it.
		require.NotNil(t, halted, "a poller that is not exempt is bounded by its budget")
		assert.Equal(t, protocol.ReasonBudgetExceeded, halted.Halt.HaltReason)
		assert.Equal(t, NodeCheckStatus, halted.Halt.Node)
		assert.Equal(t, OutcomeEscalated, res.Outcome)
	})
	t.Run("timestamp not ignored", func(t *testing.T) {
		opts := GuardOptions()
		opts.IgnoreFields = nil
		halted := runGuarded(t, opts, WorkflowCoderVerifier, LoopInput{Scenario: "identical-patch"}).halted
		require.NotNil(t, halted)
		// Every output differs by its timestamp, which the guard masks with
		// zero options: the identical patches are caught as if the
		// timestamp were ignored.
		assert.Equal(t, detect.DetectorIdenticalOutput, halted.Halt.Detector)
		assert.Equal(t, wantHalt["identical-patch"].node, halted.Halt.Node)
	})
	t.Run("no metric", func(t *testing.T) {
		opts := GuardOptions()
		opts.Nodes[NodeVerify] = interceptor.NodeOptions{CostField: "cost"}
		halted := runGuarded(t, opts, WorkflowCoderVerifier, LoopInput{Scenario: "same-failing-tests"}).halted
		require.NotNil(t, halted)
		// Nothing reads the failing count: every result is new, so only the
		// iteration budget stops the loop, four turns later.
		assert.Equal(t, protocol.ReasonBudgetExceeded, halted.Halt.HaltReason)
		assert.Equal(t, detect.DetectorCycleIterations, halted.Halt.Detector)
	})
}

// TestWarningDelaysAHaltByAtMostAWindow: an agent that ignores the warning
// halts, for the same reason, at most one detector window later than with
// no warning: the window being the turns the detector needed to trip from
// a fresh start, which is the turn it halted at without warnings.
func TestWarningDelaysAHaltByAtMostAWindow(t *testing.T) {
	noWarnings := GuardOptions()
	noWarnings.Warnings = 0
	for _, sc := range Scenarios() {
		if sc.Want != WantHalted {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			before := runGuarded(t, noWarnings, sc.Workflow, sc.Input)
			after := runGuarded(t, GuardOptions(), sc.Workflow, sc.Input)
			require.NotNil(t, before.halted)
			require.NotNil(t, after.halted)
			assert.Equal(t, before.halted.Halt.HaltReason, after.halted.Halt.HaltReason)
			window := before.res.Iterations
			late := after.res.Iterations - before.res.Iterations
			t.Logf("%s: halted at turn %d without warnings, %d with one (%d later; window %d)", sc.Name, before.res.Iterations, after.res.Iterations, late, window)
			assert.LessOrEqual(t, late, window)
			if sc.WantReason == protocol.ReasonBudgetExceeded {
				assert.Zero(t, late, "budgets do not warn")
			}
		})
	}
}
