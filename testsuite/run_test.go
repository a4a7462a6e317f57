package testsuite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

// TestRunScenarios runs every sample scenario under Run with the samples'
// guard options and checks the outcome the scenario table promises.
func TestRunScenarios(t *testing.T) {
	for _, sc := range workflows.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			opts := testsuite.RunOptions{
				Guard:    workflows.GuardOptions(),
				Register: workflows.Register,
			}
			if sc.Steer == workflows.SteerHuman {
				opts.Answer = testsuite.ResumeWithGuidance(sc.Guidance)
			}
			rep := testsuite.Run(t, opts, sc.Workflow, sc.Input)
			t.Log(rep)
			require.True(t, rep.Completed, "%v", rep.Err)
			require.NoError(t, rep.Err)
			var res workflows.LoopResult
			require.NoError(t, rep.Result(&res))
			if sc.Want == workflows.WantCompleted {
				assert.Equal(t, workflows.OutcomeCompleted, res.Outcome)
				assert.Equal(t, protocol.StateRunning, rep.FinalStatus.State)
				checkSteered(t, sc, rep)
				return
			}
			require.Len(t, rep.Halts, 1)
			assert.Equal(t, sc.WantReason, rep.Halts[0].HaltReason)
			assert.Equal(t, workflows.OutcomeEscalated, res.Outcome)
			assert.True(t, rep.Escalated())
			require.Len(t, rep.Answers, 1)
			assert.Equal(t, "escalate", rep.Answers[0].Name)
		})
	}
}

// checkSteered checks what a completed scenario was told, and by whom.
func checkSteered(t *testing.T, sc workflows.Scenario, rep testsuite.Report) {
	t.Helper()
	// The coder's first notice of the kind it heeds.
	var told *protocol.Notice
	for _, n := range rep.Notices {
		if n.Activity == workflows.NodeCode && (n.Notice.Guidance != "" || sc.Steer == workflows.SteerWarning) {
			told = &n.Notice
			break
		}
	}
	switch sc.Steer {
	case "":
		assert.Empty(t, rep.Halts)
		assert.Empty(t, rep.Notices, "a progressing loop is told nothing")
		return
	case workflows.SteerWarning:
		assert.Empty(t, rep.Halts)
		assert.Equal(t, 1, rep.FinalStatus.Warnings)
		require.NotNil(t, told)
		require.NotNil(t, told.Warning)
		assert.Equal(t, sc.WantReason, told.Warning.Reason)
	case workflows.SteerReviewer:
		assert.Empty(t, rep.Answers, "no human")
		require.NotNil(t, rep.FinalStatus.LastDecision)
		assert.Equal(t, interceptor.HandlerBy, rep.FinalStatus.LastDecision.By)
		require.NotNil(t, told)
		assert.Equal(t, rep.FinalStatus.LastDecision.Guidance, told.Guidance)
	case workflows.SteerHuman:
		require.Len(t, rep.Halts, 1)
		assert.Len(t, rep.Halts[0].Warnings, 1, "the warning the coder ignored")
		require.Len(t, rep.Answers, 1)
		require.NotNil(t, told)
		assert.Equal(t, sc.Guidance, told.Guidance)
		assert.Equal(t, "testsuite", told.By)
	}
}

func TestRunUnguarded(t *testing.T) {
	sc := scenario(t, "identical-patch")
	rep := testsuite.Run(t, testsuite.RunOptions{Unguarded: true, Register: workflows.Register}, sc.Workflow, sc.Input)
	require.NoError(t, rep.Err)
	var res workflows.LoopResult
	require.NoError(t, rep.Result(&res))
	assert.Equal(t, workflows.OutcomeGaveUp, res.Outcome, "without the guard the loop runs to MaxTurns")
	assert.Empty(t, rep.Halts)
	assert.Equal(t, protocol.State(""), rep.FinalStatus.State)
}

func TestRunResumeThenEscalate(t *testing.T) {
	sc := scenario(t, "identical-patch")
	// With no warnings each resumed loop halts again for the same reason
	// (with one, the budget would come first).
	guard := workflows.GuardOptions()
	guard.Warnings = 0
	for _, updates := range []bool{false, true} {
		t.Run(map[bool]string{false: "signals", true: "updates"}[updates], func(t *testing.T) {
			rep := testsuite.Run(t, testsuite.RunOptions{
				Guard:      guard,
				Register:   workflows.Register,
				UseUpdates: updates,
				Answer:     testsuite.Answers(testsuite.Resume("try again"), testsuite.Resume("once more"), testsuite.Escalate("enough")),
			}, sc.Workflow, sc.Input)
			t.Log(rep)
			require.NoError(t, rep.Err)
			require.Len(t, rep.Halts, 3)
			for i, h := range rep.Halts {
				assert.Equal(t, i+1, h.Seq)
				assert.Equal(t, protocol.ReasonStalled, h.HaltReason)
			}
			require.Len(t, rep.Answers, 3)
			assert.Equal(t, []string{"resume", "resume", "escalate"}, []string{rep.Answers[0].Name, rep.Answers[1].Name, rep.Answers[2].Name})
			if updates {
				for _, a := range rep.Answers {
					assert.NoError(t, a.Rejected)
					require.NotNil(t, a.Decision)
					assert.Equal(t, a.HaltSeq, a.Decision.HaltSeq)
				}
			}
			var res workflows.LoopResult
			require.NoError(t, rep.Result(&res))
			assert.Equal(t, workflows.OutcomeEscalated, res.Outcome)
			require.NotNil(t, res.Escalation)
			assert.Equal(t, "enough", res.Escalation.Reason)
			assert.Equal(t, protocol.ActionEscalate, rep.FinalStatus.LastDecision.Action)
			// The answer comes DecideAfter after the halt, in workflow time.
			for i, a := range rep.Answers {
				assert.Equal(t, testsuite.DefaultDecideAfter, a.At.Sub(rep.Halts[i].WorkflowTime))
			}
		})
	}
}

func TestRunMaxHalts(t *testing.T) {
	sc := scenario(t, "identical-patch")
	rep := testsuite.Run(t, testsuite.RunOptions{
		Guard:    workflows.GuardOptions(),
		Register: workflows.Register,
		Answer:   testsuite.Resume("keep going"),
		MaxHalts: 2,
	}, sc.Workflow, sc.Input)
	require.NoError(t, rep.Err)
	require.Len(t, rep.Answers, 3)
	assert.True(t, rep.Answers[2].Auto)
	assert.True(t, rep.Escalated())
}

func TestRunPauseTimeout(t *testing.T) {
	sc := scenario(t, "identical-patch")
	g := workflows.GuardOptions()
	g.PauseTimeout = 10 * time.Minute
	rep := testsuite.Run(t, testsuite.RunOptions{Guard: g, Register: workflows.Register, Answer: testsuite.NoAnswer()}, sc.Workflow, sc.Input)
	require.NoError(t, rep.Err)
	var res workflows.LoopResult
	require.NoError(t, rep.Result(&res))
	assert.Equal(t, workflows.OutcomeEscalated, res.Outcome)
	assert.Contains(t, res.Escalation.Reason, "pause timeout")
	assert.Empty(t, rep.Answers)
	require.Len(t, rep.Halts, 1)
}

func TestRunFailPolicyReportsHalt(t *testing.T) {
	g := workflows.GuardOptions()
	g.OnHalt = protocol.OnHaltFail
	sc := scenario(t, "oscillating")
	rep := testsuite.Run(t, testsuite.RunOptions{Guard: g, Register: workflows.Register}, sc.Workflow, sc.Input)
	require.NoError(t, rep.Err)
	require.Len(t, rep.Halts, 1)
	assert.Equal(t, protocol.ReasonOscillating, rep.Halts[0].HaltReason)
	assert.Empty(t, rep.Answers)
}

func TestRunTimeout(t *testing.T) {
	// A workflow that waits for a signal nobody sends: Run gives up after
	// Timeout and says so.
	wait := func(ctx workflow.Context) error {
		workflow.GetSignalChannel(ctx, "never").Receive(ctx, nil)
		return nil
	}
	start := time.Now()
	rep := testsuite.Run(t, testsuite.RunOptions{Timeout: 2 * time.Second, MaxWorkflowTime: time.Hour}, wait)
	assert.Less(t, time.Since(start), 20*time.Second)
	require.Error(t, rep.Err)
	t.Log(rep.Err)
}

func TestRunFixtureContinueAsNew(t *testing.T) {
	in := fixtures.ContinueInput{Turns: fixtures.Distinct("Research", 6), PerRun: 3}
	rep := testsuite.Run(t, testsuite.RunOptions{Guard: interceptor.Options{MaxCallsPerNode: 4}, Register: fixtures.Register}, fixtures.ContinueLoop, in)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, rep.Err, &can)
	assert.Contains(t, can.Header.GetFields(), "loopguard-carry")
}

func scenario(t *testing.T, name string) workflows.Scenario {
	for _, sc := range workflows.Scenarios() {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q", name)
	return workflows.Scenario{}
}

// parentOfStalling runs a stalling ScriptedLoop as a child workflow: the
// child's own guard halts it.
func parentOfStalling(ctx workflow.Context) (fixtures.Result, error) {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "stalling-child"})
	var res fixtures.Result
	err := workflow.ExecuteChildWorkflow(cctx, fixtures.ScriptedLoop, fixtures.Stalling("Code", 6, 1)).Get(ctx, &res)
	return res, err
}

func TestRunAnswersChildWorkflowHalts(t *testing.T) {
	for _, updates := range []bool{false, true} {
		t.Run(map[bool]string{false: "signals", true: "updates"}[updates], func(t *testing.T) {
			rep := testsuite.Run(t, testsuite.RunOptions{
				Register:   fixtures.Register,
				Answer:     testsuite.Resume("child may go on"),
				UseUpdates: updates,
			}, parentOfStalling)
			t.Log(rep)
			require.NoError(t, rep.Err)
			var res fixtures.Result
			require.NoError(t, rep.Result(&res))
			assert.Equal(t, 6, res.Calls)
			assert.False(t, res.Escalated)
			require.Len(t, rep.Halts, 1)
			assert.Equal(t, "stalling-child", rep.Halts[0].WorkflowID)
			assert.Equal(t, protocol.ReasonStalled, rep.Halts[0].HaltReason)
			require.Len(t, rep.Answers, 1)
			assert.Equal(t, "stalling-child", rep.Answers[0].WorkflowID)
			assert.NoError(t, rep.Answers[0].Rejected)
			assert.Equal(t, 1, rep.FinalStatus.TotalCalls, "the parent's own guard saw one call: the child")
		})
	}
}

// TestRunReportsGuidanceAndWarnings: a test can answer a halt with
// guidance and see that the agent heeded it, and read the warnings the
// loop got from the report.
func TestRunReportsGuidanceAndWarnings(t *testing.T) {
	rep := testsuite.Run(t, testsuite.RunOptions{
		Guard:    interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall}, // budgets out of the way
		Register: fixtures.Register,
		Answer:   testsuite.ResumeWithGuidance("try the other file"),
	}, fixtures.ScriptedLoop, fixtures.Repeat("Code", "the same patch", 12))
	require.True(t, rep.Completed)
	assert.Equal(t, 2, rep.FinalStatus.Warnings, "warned, halted, resumed: the ladder starts again, and the next trip warns")
	require.NotEmpty(t, rep.Halts)
	require.Len(t, rep.Halts[0].Warnings, 1, "the halt lists the unheeded warning")
	require.NotNil(t, rep.FinalStatus.LastDecision)
	assert.Equal(t, "try the other file", rep.FinalStatus.LastDecision.Guidance)
}
