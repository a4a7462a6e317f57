package activities

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// harness runs the agents in Temporal's activity test environment.
type harness struct {
	t   *testing.T
	env *testsuite.TestActivityEnvironment
	a   *Agents
}

func newHarness(t *testing.T) *harness {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	a := &Agents{}
	env.RegisterActivity(a)
	return &harness{t: t, env: env, a: a}
}

func (h *harness) code(scenario string, turn int) Patch {
	h.t.Helper()
	val, err := h.env.ExecuteActivity(h.a.Code, CodeRequest{Scenario: scenario, Turn: turn})
	require.NoError(h.t, err)
	var p Patch
	require.NoError(h.t, val.Get(&p))
	return p
}

func (h *harness) verify(scenario string, turn int) (Verdict, error) {
	h.t.Helper()
	p := h.code(scenario, turn)
	val, err := h.env.ExecuteActivity(h.a.Verify, VerifyRequest{Scenario: scenario, Turn: turn, Patch: p})
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	require.NoError(h.t, val.Get(&v))
	require.Equal(h.t, p.ID, v.PatchID)
	return v, nil
}

func (h *harness) verdicts(scenario string, turns int) []Verdict {
	h.t.Helper()
	var out []Verdict
	for turn := 1; turn <= turns; turn++ {
		v, err := h.verify(scenario, turn)
		require.NoError(h.t, err)
		out = append(out, v)
	}
	return out
}

func (h *harness) plan(scenario string, step int) PlanStep {
	h.t.Helper()
	val, err := h.env.ExecuteActivity(h.a.Plan, PlanRequest{Scenario: scenario, Step: step})
	require.NoError(h.t, err)
	var s PlanStep
	require.NoError(h.t, val.Get(&s))
	return s
}

func (h *harness) research(scenario string, step int, query string) Findings {
	h.t.Helper()
	val, err := h.env.ExecuteActivity(h.a.Research, ResearchRequest{Scenario: scenario, Step: step, Query: query})
	require.NoError(h.t, err)
	var f Findings
	require.NoError(h.t, val.Get(&f))
	return f
}

func (h *harness) status(poll int) JobStatus {
	h.t.Helper()
	val, err := h.env.ExecuteActivity(h.a.CheckStatus, StatusRequest{Scenario: ScenarioPolling, JobID: "job-1", Poll: poll})
	require.NoError(h.t, err)
	var s JobStatus
	require.NoError(h.t, val.Get(&s))
	return s
}

// normalised is a result's JSON without generatedAt: what the guard hashes
// with the sample options.
func normalised(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.Contains(t, m, "generatedAt", "every result has a generatedAt field")
	delete(m, "generatedAt")
	b, err = json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

func failingCounts(vs []Verdict) []int {
	var out []int
	for _, v := range vs {
		out = append(out, v.Failing)
	}
	return out
}

func TestConverging(t *testing.T) {
	for _, scenario := range []string{ScenarioConverging, ScenarioChildConverging} {
		t.Run(scenario, func(t *testing.T) {
			h := newHarness(t)
			vs := h.verdicts(scenario, 4)
			require.Equal(t, []int{7, 4, 2, 0}, failingCounts(vs))
			for _, v := range vs[:3] {
				require.False(t, v.Passed)
				require.Len(t, v.FailingTests, v.Failing)
			}
			require.True(t, vs[3].Passed)
			require.Empty(t, vs[3].FailingTests)
			require.Equal(t, "all tests pass", vs[3].Summary)

			seen := map[string]bool{}
			for turn := 1; turn <= 4; turn++ {
				seen[h.code(scenario, turn).ID] = true
			}
			require.Len(t, seen, 4, "every converging patch is new")
		})
	}
}

func TestIdenticalPatch(t *testing.T) {
	for _, scenario := range []string{ScenarioIdenticalPatch, ScenarioChildStalled} {
		t.Run(scenario, func(t *testing.T) {
			h := newHarness(t)
			p1, p2, p3 := h.code(scenario, 1), h.code(scenario, 2), h.code(scenario, 3)
			require.Equal(t, normalised(t, p1), normalised(t, p2))
			require.Equal(t, normalised(t, p1), normalised(t, p3))
			require.NotEqual(t, p1.GeneratedAt, p2.GeneratedAt, "only the timestamp changes")

			vs := h.verdicts(scenario, 3)
			require.Equal(t, []int{4, 4, 4}, failingCounts(vs))
			require.Equal(t, normalised(t, vs[0]), normalised(t, vs[1]))
			require.Equal(t, normalised(t, vs[0]), normalised(t, vs[2]))
			require.NotEqual(t, vs[0].GeneratedAt, vs[1].GeneratedAt)
		})
	}
}

func TestSameFailingTests(t *testing.T) {
	h := newHarness(t)
	const turns = 12
	patches := map[string]bool{}
	for turn := 1; turn <= turns; turn++ {
		patches[normalised(t, h.code(ScenarioSameFailingTests, turn))] = true
	}
	require.Len(t, patches, turns, "every patch is different")

	vs := h.verdicts(ScenarioSameFailingTests, turns)
	outputs := map[string]bool{}
	for _, v := range vs {
		require.Equal(t, 4, v.Failing)
		require.Equal(t, vs[0].FailingTests, v.FailingTests, "the same tests fail")
		outputs[normalised(t, v)] = true
	}
	require.Len(t, outputs, turns, "verdicts differ (they name the patch): only the metric is stuck")
}

func TestOscillating(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for turn := 1; turn <= 6; turn++ {
		ids = append(ids, h.code(ScenarioOscillating, turn).ID)
	}
	a, b := ids[0], ids[1]
	require.NotEqual(t, a, b)
	require.Equal(t, []string{a, b, a, b, a, b}, ids)

	vs := h.verdicts(ScenarioOscillating, 4)
	// B improves on A, then nothing improves on B: the failing count alone
	// would not halt before the coder's fourth patch shows the A/B period.
	require.Equal(t, []int{3, 2, 3, 2}, failingCounts(vs))
	require.Equal(t, normalised(t, vs[0]), normalised(t, vs[2]))
	require.Equal(t, normalised(t, vs[1]), normalised(t, vs[3]))
	require.NotEqual(t, normalised(t, vs[0]), normalised(t, vs[1]))
}

func TestRepeatedError(t *testing.T) {
	h := newHarness(t)
	patches := map[string]bool{}
	var msgs []string
	for turn := 1; turn <= 4; turn++ {
		patches[h.code(ScenarioRepeatedError, turn).ID] = true
		_, err := h.verify(ScenarioRepeatedError, turn)
		require.Error(t, err)
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%T", err)
		require.Equal(t, ErrSandboxUnavailable, app.Type())
		require.True(t, app.NonRetryable(), "Temporal must not retry it")
		msgs = append(msgs, app.Error())
	}
	require.Len(t, patches, 4, "the coder keeps trying new patches")
	for _, m := range msgs {
		require.Equal(t, msgs[0], m, "the same error every turn")
	}
}

func TestBudget(t *testing.T) {
	h := newHarness(t)
	const turns = 20
	vs := h.verdicts(ScenarioBudget, turns)
	outputs := map[string]bool{}
	for i, v := range vs {
		require.Equal(t, 40-i, v.Failing, "turn %d", i+1)
		require.False(t, v.Passed)
		require.Len(t, v.FailingTests, maxListedTests)
		outputs[normalised(t, v)] = true
	}
	require.Len(t, outputs, turns, "a new verdict every turn")
	patches := map[string]bool{}
	for turn := 1; turn <= turns; turn++ {
		patches[h.code(ScenarioBudget, turn).ID] = true
	}
	require.Len(t, patches, turns, "a new patch every turn")
	require.Equal(t, []string{"TestCase02", "TestCase03"}, vs[0].FailingTests[:2])
	require.Contains(t, vs[0].Summary, "40 failing: TestCase02")
}

func TestCheckStatus(t *testing.T) {
	h := newHarness(t)
	var progress []int
	var states []string
	var outputs []string
	for poll := 1; poll <= 12; poll++ {
		s := h.status(poll)
		require.Equal(t, "job-1", s.JobID)
		progress = append(progress, s.Progress)
		states = append(states, s.State)
		outputs = append(outputs, normalised(t, s))
	}
	require.Equal(t, []int{0, 10, 25, 40, 40, 40, 55, 70, 85, 95, 100, 100}, progress)
	for i, st := range states {
		want := JobRunning
		if i >= 10 {
			want = JobDone
		}
		require.Equal(t, want, st, "poll %d", i+1)
	}
	// Three identical statuses in a row and more than ten polls: without its
	// Exempt rule the poller would trip the guard.
	require.Equal(t, outputs[3], outputs[4])
	require.Equal(t, outputs[3], outputs[5])
}

func TestSummarize(t *testing.T) {
	h := newHarness(t)
	val, err := h.env.ExecuteActivity(h.a.Summarize, SummarizeRequest{Scenario: ScenarioPolling, Status: h.status(11), Polls: 11})
	require.NoError(t, err)
	var s Summary
	require.NoError(t, val.Get(&s))
	require.Equal(t, "job job-1 done after 11 polls (100%): all 412 tests passed", s.Text)
	require.Positive(t, s.Cost)
}

func TestPlannerResearch(t *testing.T) {
	h := newHarness(t)
	var plans, findings []string
	for step := 1; step <= 6; step++ {
		s := h.plan(ScenarioPlannerResearch, step)
		require.Equal(t, NextResearch, s.Next, "the stuck planner never finishes")
		require.Contains(t, s.Action, "need to assess")
		f := h.research(ScenarioPlannerResearch, step, s.Query)
		require.False(t, f.NewInformation)
		require.Contains(t, f.Summary, "already done")
		plans = append(plans, normalised(t, s))
		findings = append(findings, normalised(t, f))
	}
	// A/B/A/B on both nodes, never the same output twice in a row.
	for i := 2; i < len(plans); i++ {
		require.Equal(t, plans[i-2], plans[i])
		require.Equal(t, findings[i-2], findings[i])
		require.NotEqual(t, plans[i-1], plans[i])
		require.NotEqual(t, findings[i-1], findings[i])
	}
}

func TestPlannerConverges(t *testing.T) {
	h := newHarness(t)
	queries := map[string]bool{}
	for step := 1; step <= 3; step++ {
		s := h.plan(ScenarioConverging, step)
		require.Equal(t, NextResearch, s.Next)
		f := h.research(ScenarioConverging, step, s.Query)
		require.True(t, f.NewInformation, f.Summary)
		require.NotEmpty(t, f.Sources)
		queries[s.Query] = true
	}
	require.Len(t, queries, 3)
	done := h.plan(ScenarioConverging, 4)
	require.Equal(t, NextDone, done.Next)
	require.NotEmpty(t, done.Answer)
}

func TestUnknownScenario(t *testing.T) {
	h := newHarness(t)
	calls := map[string]func() error{
		"Code": func() error {
			_, err := h.env.ExecuteActivity(h.a.Code, CodeRequest{Scenario: "nope", Turn: 1})
			return err
		},
		"Verify": func() error {
			_, err := h.env.ExecuteActivity(h.a.Verify, VerifyRequest{Scenario: "nope", Turn: 1})
			return err
		},
		"Plan": func() error {
			_, err := h.env.ExecuteActivity(h.a.Plan, PlanRequest{Scenario: "nope", Step: 1})
			return err
		},
		"Research": func() error {
			_, err := h.env.ExecuteActivity(h.a.Research, ResearchRequest{Scenario: "nope", Step: 1})
			return err
		},
		"CheckStatus": func() error {
			_, err := h.env.ExecuteActivity(h.a.CheckStatus, StatusRequest{Scenario: "nope", Poll: 1})
			return err
		},
		"Summarize": func() error {
			_, err := h.env.ExecuteActivity(h.a.Summarize, SummarizeRequest{Scenario: "nope"})
			return err
		},
		"Review": func() error {
			_, err := h.env.ExecuteActivity(h.a.Review, ReviewRequest{Scenario: "nope"})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%s: %v", name, err)
		require.Equal(t, ErrUnknownScenario, app.Type(), name)
		require.True(t, app.NonRetryable(), name)
	}
}

// TestSteerableCoder: the steerable coders repeat the identical patch
// until told; what tells them depends on the scenario; told, they change
// approach, and the verdicts follow the patches to a pass.
func TestSteerableCoder(t *testing.T) {
	warning := protocol.Notice{Warning: &protocol.Warning{N: 1, Of: 1, Directive: "change your approach"}}
	guidance := protocol.Notice{Guidance: "fix the cache", By: "ana"}
	tests := []struct {
		give     string
		notice   protocol.Notice
		want     string // the patch title
		wantHeed string
	}{
		{ScenarioHeedsWarning, protocol.Notice{}, identicalEdit.title, ""},
		{ScenarioHeedsWarning, warning, convergingEdits[2].title, "warning 1/1: change your approach"},
		{ScenarioReviewed, warning, identicalEdit.title, ""},
		{ScenarioGuided, warning, identicalEdit.title, ""},
		{ScenarioReviewed, guidance, convergingEdits[2].title, "guidance from ana: fix the cache"},
		{ScenarioGuided, protocol.Notice{Guidance: "fix the cache"}, convergingEdits[2].title, "guidance from a human: fix the cache"},
		{ScenarioHeedsWarning, guidance, convergingEdits[2].title, "guidance from ana: fix the cache"},
	}
	for _, tt := range tests {
		p, err := scriptPatch(CodeRequest{Scenario: tt.give, Turn: 4, FailingTests: stuckTests}, tt.notice)
		require.NoError(t, err)
		require.Equal(t, tt.want, p.Title, "%s %+v", tt.give, tt.notice)
		require.Equal(t, tt.wantHeed, p.Heeded, tt.give)
	}

	for _, scenario := range []string{ScenarioHeedsWarning, ScenarioReviewed, ScenarioGuided} {
		var feedback []string
		var titles []string
		var failing []int
		for turn := 1; turn <= 4; turn++ {
			n := protocol.Notice{}
			if turn >= 3 {
				n = guidance // stays in force until the loop halts again
			}
			p, err := scriptPatch(CodeRequest{Scenario: scenario, Turn: turn, FailingTests: feedback}, n)
			require.NoError(t, err)
			v, err := scriptVerdict(VerifyRequest{Scenario: scenario, Turn: turn, Patch: p})
			require.NoError(t, err)
			titles, failing, feedback = append(titles, p.Title), append(failing, v.Failing), v.FailingTests
			if v.Passed {
				break
			}
		}
		require.Equal(t, []string{identicalEdit.title, identicalEdit.title, convergingEdits[2].title, convergingEdits[3].title}, titles, scenario)
		require.Equal(t, []int{4, 4, 2, 0}, failing, scenario)
	}
}

func TestReview(t *testing.T) {
	h := newHarness(t)
	for _, tt := range []struct {
		give string
		want string
	}{
		{ScenarioReviewed, reviewerGuidance},
		{ScenarioIdenticalPatch, ""}, // the reviewer cannot help: a human decides
	} {
		val, err := h.env.ExecuteActivity(h.a.Review, ReviewRequest{Scenario: tt.give, Reason: "stalled", Node: "Code"})
		require.NoError(t, err)
		var note ReviewNote
		require.NoError(t, val.Get(&note))
		require.Equal(t, tt.want, note.Guidance, tt.give)
	}
}

// TestDeterministic: the same request gives the same result, timestamps
// included, so runs are repeatable.
func TestDeterministic(t *testing.T) {
	for _, scenario := range ScenarioNames() {
		for turn := 1; turn <= 5; turn++ {
			p1, err1 := scriptPatch(CodeRequest{Scenario: scenario, Turn: turn}, protocol.Notice{})
			p2, err2 := scriptPatch(CodeRequest{Scenario: scenario, Turn: turn}, protocol.Notice{})
			require.NoError(t, err1)
			require.NoError(t, err2)
			require.Equal(t, p1, p2)
			v1, err1 := scriptVerdict(VerifyRequest{Scenario: scenario, Turn: turn, Patch: p1})
			v2, err2 := scriptVerdict(VerifyRequest{Scenario: scenario, Turn: turn, Patch: p2})
			require.Equal(t, err1, err2)
			require.Equal(t, v1, v2)
			s1, _ := scriptPlan(PlanRequest{Scenario: scenario, Step: turn})
			s2, _ := scriptPlan(PlanRequest{Scenario: scenario, Step: turn})
			require.Equal(t, s1, s2)
		}
	}
}

func TestScenarioNames(t *testing.T) {
	names := ScenarioNames()
	require.Len(t, names, 13)
	for _, n := range names {
		require.True(t, IsScenario(n))
	}
	require.False(t, IsScenario(""))
	names[0] = "mutated"
	require.Equal(t, ScenarioConverging, ScenarioNames()[0], "ScenarioNames returns a copy")
}
