package activities

import "slices"

// The scenario names. A request's Scenario field selects the script the
// agents follow; see each constant for what the agents do.
const (
	// ScenarioConverging: each patch fixes more tests (7 → 4 → 2 → 0
	// failing) and the fourth passes. The planner asks three distinct
	// questions, learns something new each time, then answers.
	ScenarioConverging = "converging"
	// ScenarioIdenticalPatch: the coder re-proposes the same patch every
	// turn and the verifier gives the same verdict (4 failing).
	ScenarioIdenticalPatch = "identical-patch"
	// ScenarioSameFailingTests: every patch is different, but the same 4
	// tests fail every time.
	ScenarioSameFailingTests = "same-failing-tests"
	// ScenarioOscillating: the coder alternates between patch A (strict
	// parser, 3 failing) and patch B (lenient parser, 2 failing).
	ScenarioOscillating = "oscillating"
	// ScenarioRepeatedError: the coder proposes a new patch every turn, and
	// the verifier fails every time with the same non-retryable
	// SandboxUnavailable error.
	ScenarioRepeatedError = "repeated-error"
	// ScenarioBudget: slow, steady progress that never converges: 40, 39,
	// 38 … failing tests, a new patch and a new verdict every turn.
	ScenarioBudget = "budget"
	// ScenarioPolling: a job that CheckStatus reports running (progress 0,
	// 10, 25, 40, 40, 40, 55, 70, 85, 95 %) for ten polls and done on the
	// eleventh.
	ScenarioPolling = "polling"
	// ScenarioPlannerResearch: seed 003's loop. The planner keeps saying it
	// needs to assess something, alternating between the auth module and
	// the session store; the researcher keeps answering that it was already
	// done, with no new information.
	ScenarioPlannerResearch = "planner-research"
	// ScenarioChildConverging: the converging coder and verifier, run by a
	// parent workflow one child workflow per iteration.
	ScenarioChildConverging = "child-converging"
	// ScenarioChildStalled: the identical-patch coder and verifier, run one
	// child workflow per iteration.
	ScenarioChildStalled = "child-stalled"
	// ScenarioHeedsWarning: the coder re-proposes the identical patch, as in
	// ScenarioIdenticalPatch, until a call's notice warns it that it is
	// looping (interceptor.NoticeFrom); then it changes approach, and the
	// next two patches leave 2 and then 0 tests failing.
	ScenarioHeedsWarning = "heeds-warning"
	// ScenarioReviewed: the coder ignores warnings and re-proposes the
	// identical patch until it is given guidance. The workflow's halt
	// handler asks the reviewer (Review), whose guidance the coder follows
	// as in ScenarioHeedsWarning.
	ScenarioReviewed = "reviewed"
	// ScenarioGuided: the coder ignores warnings, as in ScenarioReviewed,
	// and no reviewer is asked: it follows the guidance of the human who
	// resumes the halt.
	ScenarioGuided = "guided"
)

var scenarioNames = []string{
	ScenarioConverging,
	ScenarioIdenticalPatch,
	ScenarioSameFailingTests,
	ScenarioOscillating,
	ScenarioRepeatedError,
	ScenarioBudget,
	ScenarioPolling,
	ScenarioPlannerResearch,
	ScenarioChildConverging,
	ScenarioChildStalled,
	ScenarioHeedsWarning,
	ScenarioReviewed,
	ScenarioGuided,
}

// ScenarioNames returns every scenario name, in a stable order.
func ScenarioNames() []string { return slices.Clone(scenarioNames) }

// IsScenario reports whether name is one of the scenario names.
func IsScenario(name string) bool { return slices.Contains(scenarioNames, name) }
