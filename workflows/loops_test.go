package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// run is one workflow run in the test environment, without the guard.
type run struct {
	env   *testsuite.TestWorkflowEnvironment
	calls map[string]int // activity starts (attempts) per activity type
}

func newRun(t *testing.T) *run {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	Register(env)
	r := &run{env: env, calls: map[string]int{}}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		r.calls[info.ActivityType.Name]++
	})
	return r
}

func (r *run) execute(t *testing.T, workflowType string, in LoopInput) LoopResult {
	t.Helper()
	r.env.ExecuteWorkflow(workflowType, in)
	require.True(t, r.env.IsWorkflowCompleted())
	require.NoError(t, r.env.GetWorkflowError())
	var res LoopResult
	require.NoError(t, r.env.GetWorkflowResult(&res))
	return res
}

// escalation is the error a guarded call returns when a human escalates.
func escalation(node string, reason protocol.HaltReason) error {
	esc := interceptor.Escalation{
		Reason: "the coder is going in circles",
		By:     "alice",
		Halt:   protocol.HaltEvent{HaltReason: reason, Node: node, Seq: 1, CycleID: "cycle-Code-Verify"},
	}
	return temporal.NewNonRetryableApplicationError("loop escalated", interceptor.EscalatedErrorType, nil, esc)
}

// TestScenariosWithoutGuard runs every scenario without the guard: the
// ones the guard should complete complete, the others run to MaxTurns.
func TestScenariosWithoutGuard(t *testing.T) {
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			r := newRun(t)
			res := r.execute(t, sc.Workflow, sc.Input)
			require.Equal(t, sc.Name, res.Scenario)
			require.Nil(t, res.Escalation)
			switch {
			case sc.Steer != "":
				// Nobody tells the agent it is looping.
				require.Equal(t, OutcomeGaveUp, res.Outcome, "without the guard, nothing steers it")
				require.Equal(t, sc.Input.MaxTurns, res.Iterations)
			case sc.Want == WantCompleted:
				require.Equal(t, OutcomeCompleted, res.Outcome)
				require.Less(t, res.Iterations, sc.Input.MaxTurns)
			case sc.Want == WantHalted:
				require.Equal(t, OutcomeGaveUp, res.Outcome, "nothing but the guard stops it")
				require.Equal(t, sc.Input.MaxTurns, res.Iterations)
			default:
				t.Fatalf("bad Want %q", sc.Want)
			}
			require.NotEmpty(t, res.Final)
		})
	}
}

func TestCoderVerifierLoop(t *testing.T) {
	const turns = DefaultMaxTurns
	tests := []struct {
		scenario   string
		outcome    string
		iterations int
		failing    int
		final      string // a substring of Final
		lastError  string
		calls      map[string]int
	}{
		{activities.ScenarioConverging, OutcomeCompleted, 4, 0, "maxDelay", "", map[string]int{"Code": 4, "Verify": 4}},
		{activities.ScenarioIdenticalPatch, OutcomeGaveUp, turns, 4, `cfg.Name = "default"`, "", map[string]int{"Code": turns, "Verify": turns}},
		{activities.ScenarioSameFailingTests, OutcomeGaveUp, turns, 4, "revision 20", "", map[string]int{"Code": turns, "Verify": turns}},
		// The best verified patch is B (2 failing), the latest B.
		{activities.ScenarioOscillating, OutcomeGaveUp, turns, 2, "lenient", "", map[string]int{"Code": turns, "Verify": turns}},
		// Never verified: Final is the last patch; Verify is not retried.
		{activities.ScenarioRepeatedError, OutcomeGaveUp, turns, -1, "revision 20", "sandbox unavailable", map[string]int{"Code": turns, "Verify": turns}},
		{activities.ScenarioBudget, OutcomeGaveUp, turns, 21, "expected[20]", "", map[string]int{"Code": turns, "Verify": turns}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			r := newRun(t)
			res := r.execute(t, WorkflowCoderVerifier, LoopInput{Scenario: tt.scenario})
			require.Equal(t, tt.outcome, res.Outcome)
			require.Equal(t, tt.iterations, res.Iterations)
			require.Equal(t, tt.failing, res.Failing)
			require.Contains(t, res.Final, tt.final)
			if tt.lastError == "" {
				require.Empty(t, res.LastError)
			} else {
				require.Contains(t, res.LastError, tt.lastError)
				require.NotContains(t, res.LastError, "scheduledEventID", "the message, not the wrapper")
			}
			require.Equal(t, tt.calls, r.calls)
		})
	}
}

func TestMaxTurns(t *testing.T) {
	r := newRun(t)
	res := r.execute(t, WorkflowCoderVerifier, LoopInput{Scenario: activities.ScenarioIdenticalPatch, MaxTurns: 3})
	require.Equal(t, OutcomeGaveUp, res.Outcome)
	require.Equal(t, 3, res.Iterations)
	require.Equal(t, 3, r.calls["Code"])
}

func TestUnknownScenario(t *testing.T) {
	for _, wf := range []string{WorkflowCoderVerifier, WorkflowPlannerResearcher, WorkflowChildIteration, WorkflowPolling} {
		r := newRun(t)
		r.env.ExecuteWorkflow(wf, LoopInput{Scenario: "nope"})
		err := r.env.GetWorkflowError()
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%s: %v", wf, err)
		require.Equal(t, activities.ErrUnknownScenario, app.Type())
		require.Empty(t, r.calls, wf)
	}
}

// TestEscalation: a call that returns LoopEscalated ends the loop with
// Outcome escalated, the human's decision and the best result so far.
func TestEscalation(t *testing.T) {
	r := newRun(t)
	agents := &activities.Agents{}
	r.env.OnActivity("Code", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, req activities.CodeRequest) (activities.Patch, error) {
			if req.Turn == 4 { // the guard halted at C4; a human escalated
				return activities.Patch{}, escalation(NodeVerify, protocol.ReasonRepeatedError)
			}
			return agents.Code(ctx, req)
		})
	res := r.execute(t, WorkflowCoderVerifier, LoopInput{Scenario: activities.ScenarioRepeatedError})
	require.Equal(t, OutcomeEscalated, res.Outcome)
	require.Equal(t, 4, res.Iterations)
	require.NotNil(t, res.Escalation)
	require.Equal(t, "the coder is going in circles", res.Escalation.Reason)
	require.Equal(t, "alice", res.Escalation.By)
	require.Equal(t, protocol.ReasonRepeatedError, res.Escalation.Halt.HaltReason)
	require.Equal(t, NodeVerify, res.Escalation.Halt.Node)
	require.Equal(t, -1, res.Failing, "nothing was ever verified")
	require.Contains(t, res.Final, "revision 3", "the last patch before the halt")
	require.Contains(t, res.LastError, "sandbox unavailable")
	require.Equal(t, 3, r.calls["Verify"])
}

func TestEscalationKeepsBestPatch(t *testing.T) {
	r := newRun(t)
	agents := &activities.Agents{}
	r.env.OnActivity("Verify", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, req activities.VerifyRequest) (activities.Verdict, error) {
			if req.Turn == 4 { // halted at V4: the coder's A/B period showed at C4
				return activities.Verdict{}, escalation(NodeCode, protocol.ReasonOscillating)
			}
			return agents.Verify(ctx, req)
		})
	res := r.execute(t, WorkflowCoderVerifier, LoopInput{Scenario: activities.ScenarioOscillating})
	require.Equal(t, OutcomeEscalated, res.Outcome)
	require.Equal(t, 4, res.Iterations)
	require.Equal(t, 2, res.Failing, "patch B, verified at turn 2, is the best")
	require.Contains(t, res.Final, "lenient")
	require.Equal(t, protocol.ReasonOscillating, res.Escalation.Halt.HaltReason)
}

func TestPlannerResearcherLoop(t *testing.T) {
	t.Run("converging", func(t *testing.T) {
		r := newRun(t)
		res := r.execute(t, WorkflowPlannerResearcher, LoopInput{Scenario: activities.ScenarioConverging})
		require.Equal(t, OutcomeCompleted, res.Outcome)
		require.Equal(t, 4, res.Iterations)
		require.Contains(t, res.Final, "refresh tokens")
		require.Equal(t, -1, res.Failing)
		require.Equal(t, map[string]int{"Plan": 4, "Research": 3}, r.calls)
	})
	t.Run("planner-research", func(t *testing.T) {
		r := newRun(t)
		res := r.execute(t, WorkflowPlannerResearcher, LoopInput{Scenario: activities.ScenarioPlannerResearch})
		require.Equal(t, OutcomeGaveUp, res.Outcome)
		require.Equal(t, DefaultMaxTurns, res.Iterations)
		require.Contains(t, res.Final, "already done: the session store")
		require.Equal(t, map[string]int{"Plan": DefaultMaxTurns, "Research": DefaultMaxTurns}, r.calls)
	})
	t.Run("escalated", func(t *testing.T) {
		r := newRun(t)
		agents := &activities.Agents{}
		r.env.OnActivity("Research", mock.Anything, mock.Anything).Return(
			func(ctx context.Context, req activities.ResearchRequest) (activities.Findings, error) {
				if req.Step == 4 {
					return activities.Findings{}, escalation(NodePlan, protocol.ReasonOscillating)
				}
				return agents.Research(ctx, req)
			})
		res := r.execute(t, WorkflowPlannerResearcher, LoopInput{Scenario: activities.ScenarioPlannerResearch})
		require.Equal(t, OutcomeEscalated, res.Outcome)
		require.Equal(t, 4, res.Iterations)
		require.Contains(t, res.Final, "already done: the auth module", "the findings of step 3")
		require.Equal(t, NodePlan, res.Escalation.Halt.Node)
	})
}

func TestChildIterationLoop(t *testing.T) {
	t.Run("converging", func(t *testing.T) {
		r := newRun(t)
		res := r.execute(t, WorkflowChildIteration, LoopInput{Scenario: activities.ScenarioChildConverging})
		require.Equal(t, OutcomeCompleted, res.Outcome)
		require.Equal(t, 4, res.Iterations)
		require.Equal(t, 0, res.Failing)
		require.Contains(t, res.Final, "maxDelay")
		require.Equal(t, map[string]int{"Code": 4, "Verify": 4}, r.calls)
	})
	t.Run("stalled", func(t *testing.T) {
		r := newRun(t)
		res := r.execute(t, WorkflowChildIteration, LoopInput{Scenario: activities.ScenarioChildStalled, MaxTurns: 5})
		require.Equal(t, OutcomeGaveUp, res.Outcome)
		require.Equal(t, 5, res.Iterations)
		require.Equal(t, 4, res.Failing)
	})
	t.Run("escalated in a child", func(t *testing.T) {
		// The child's own call is escalated: the child fails with the
		// LoopEscalated error and the parent sees it through the child
		// workflow error.
		r := newRun(t)
		agents := &activities.Agents{}
		r.env.OnActivity("Code", mock.Anything, mock.Anything).Return(
			func(ctx context.Context, req activities.CodeRequest) (activities.Patch, error) {
				if req.Turn == 3 {
					return activities.Patch{}, escalation(NodeCode, protocol.ReasonStalled)
				}
				return agents.Code(ctx, req)
			})
		res := r.execute(t, WorkflowChildIteration, LoopInput{Scenario: activities.ScenarioChildStalled})
		require.Equal(t, OutcomeEscalated, res.Outcome)
		require.Equal(t, 3, res.Iterations)
		require.Equal(t, 4, res.Failing)
		require.Equal(t, "alice", res.Escalation.By)
		require.Equal(t, protocol.ReasonStalled, res.Escalation.Halt.HaltReason)
	})
	t.Run("escalated at the child call", func(t *testing.T) {
		// The parent's guarded child call is escalated (mocked here as the
		// child failing with the error the guard returns).
		r := newRun(t)
		n := 0
		r.env.OnWorkflow(WorkflowIteration, mock.Anything, mock.Anything).Return(
			func(ctx workflow.Context, in IterationInput) (IterationResult, error) {
				n++
				if in.Iteration == 4 {
					return IterationResult{}, escalation(NodeIteration, protocol.ReasonStalled)
				}
				return IterationResult{PatchID: "p", Diff: "same", Failing: 4, FailingTests: []string{"TestA"}}, nil
			})
		res := r.execute(t, WorkflowChildIteration, LoopInput{Scenario: activities.ScenarioChildStalled})
		require.Equal(t, OutcomeEscalated, res.Outcome)
		require.Equal(t, 4, res.Iterations)
		require.Equal(t, 4, n)
		require.Equal(t, "same", res.Final)
		require.Equal(t, NodeIteration, res.Escalation.Halt.Node)
	})
	t.Run("child errors", func(t *testing.T) {
		r := newRun(t)
		res := r.execute(t, WorkflowChildIteration, LoopInput{Scenario: activities.ScenarioRepeatedError, MaxTurns: 3})
		require.Equal(t, OutcomeGaveUp, res.Outcome)
		require.Equal(t, 3, res.Iterations)
		require.Contains(t, res.LastError, "sandbox unavailable")
		require.Equal(t, map[string]int{"Code": 3, "Verify": 3}, r.calls)
	})
}

func TestIterationWorkflow(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	results := map[string]IterationResult{}
	for iter := 1; iter <= 2; iter++ {
		env := ts.NewTestWorkflowEnvironment()
		Register(env)
		env.ExecuteWorkflow(IterationWorkflow, IterationInput{Scenario: activities.ScenarioChildStalled, Iteration: iter})
		require.NoError(t, env.GetWorkflowError())
		var res IterationResult
		require.NoError(t, env.GetWorkflowResult(&res))
		require.Equal(t, 4, res.Failing)
		require.False(t, res.Passed)
		require.Positive(t, res.Cost)
		results[res.GeneratedAt] = res
	}
	require.Len(t, results, 2, "the timestamps differ")
	var rs []IterationResult
	for _, r := range results {
		r.GeneratedAt = ""
		rs = append(rs, r)
	}
	require.Equal(t, rs[0], rs[1], "otherwise the stalled iterations are identical")
}

func TestPollingJob(t *testing.T) {
	r := newRun(t)
	start := r.env.Now()
	res := r.execute(t, WorkflowPolling, LoopInput{Scenario: activities.ScenarioPolling, PollInterval: 30 * time.Second})
	require.Equal(t, OutcomeCompleted, res.Outcome)
	require.Equal(t, 11, res.Iterations)
	require.Equal(t, -1, res.Failing)
	require.True(t, strings.HasSuffix(res.Final, "done after 11 polls (100%): all 412 tests passed"), res.Final)
	require.Equal(t, map[string]int{"CheckStatus": 11, "Summarize": 1}, r.calls)
	require.GreaterOrEqual(t, r.env.Now().Sub(start), 10*30*time.Second, "it waited between polls")

	r = newRun(t)
	res = r.execute(t, WorkflowPolling, LoopInput{Scenario: activities.ScenarioPolling, MaxTurns: 5})
	require.Equal(t, OutcomeGaveUp, res.Outcome)
	require.Equal(t, 5, res.Iterations)
	require.Equal(t, "waiting for a test runner", res.Final)
}
