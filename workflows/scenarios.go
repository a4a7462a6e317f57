// The sample scenarios, and what the guard (GuardOptions: one warning per
// loop, otherwise default thresholds) does with each. Cn/Vn are the
// coder's/verifier's n-th call, Pn/Rn the planner's/researcher's, In the
// n-th child workflow. The guard reads a result at the next guarded call,
// so the result that trips a detector acts on the call right after it.
// The first trip of a loop is a warning: the call goes ahead carrying it in
// its notice, and the detector starts over. The second trip halts: the
// loop pauses there until a human (or the workflow's halt handler) resumes
// or escalates. TestScenariosWithGuard checks every line;
// TestWarningDelaysAHaltByAtMostAWindow checks that each halt comes at
// most one detector window later than with no warning (the turn in
// brackets).
//
//	scenario            workflow               want                    the warning, then what halts or steers it
//	converging          CoderVerifierLoop      completed               -: new patch each turn, failing 7→4→2→0 improves every turn; passes at V4
//	identical-patch     CoderVerifierLoop      halted stalled          identical_output: C1=C2=C3 warned at V3's call; the coder ignores it; Verify→Code the same 3 times again, halted at C6's call (turn 6; 3)
//	same-failing-tests  CoderVerifierLoop      halted stalled          no_improvement on Verify: failing stays 4; warned at C5's call, halted at C9's call (turn 9; 5)
//	oscillating         CoderVerifierLoop      halted oscillating      output_oscillation: Code→Verify with A,3,B,2 twice; warned at C5's call, halted at C9's call (turn 9; 5)
//	repeated-error      CoderVerifierLoop      halted repeated_error   repeated_error on Verify: the same SandboxUnavailable error 4 times after different patches; warned at C5's call, halted at C9's (turn 9; 5)
//	budget              CoderVerifierLoop      halted budget_exceeded  cycle_iterations on cycle Code→Verify: 8/8 iterations, refused at C9 (turn 9; budgets do not warn); every result is new and the metric improves
//	polling             PollingJob             completed               -: 11 polls, 3 identical statuses in a row, but CheckStatus is Exempt; Summarize runs once
//	planner-research    PlannerResearcherLoop  halted oscillating      output_oscillation: Plan→Research with auth/session twice; warned at P5's call, halted at P9's (step 9; 5)
//	child-converging    ChildIterationLoop     completed               -: one IterationWorkflow per turn, failing 7→4→2→0
//	child-stalled       ChildIterationLoop     halted stalled          identical_output on IterationWorkflow: I1=I2=I3 warned at I4's call, halted at I7's (turn 7; 4)
//	heeds-warning       CoderVerifierLoop      completed               identical_output warned at V3's call; C4 reads the warning in its notice and changes approach: 2 failing at V4, passes at V5; no halt
//	reviewed            CoderVerifierLoop      completed               as identical-patch to the halt at C6's call; the halt handler asks Review and resumes with its guidance; C6 follows it, passes at V7; no human
//	guided              CoderVerifierLoop      completed               as identical-patch to the halt at C6's call; a human resumes with Scenario.Guidance; C6 follows it, passes at V7
//
// Without the guard every "halted" and steered scenario runs to
// LoopInput.MaxTurns and ends with Outcome "gave_up": that is what the
// guard is for.

package workflows

import (
	"github.com/loopguard/loopguard/interceptor/protocol"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
)

// The workflow type names (the function names, as Register registers them).
const (
	WorkflowCoderVerifier     = "CoderVerifierLoop"
	WorkflowPlannerResearcher = "PlannerResearcherLoop"
	WorkflowChildIteration    = "ChildIterationLoop"
	WorkflowIteration         = "IterationWorkflow"
	WorkflowPolling           = "PollingJob"
	WorkflowSupervisor        = "Supervisor"
)

// The guard's node names in the samples: the activity method names and the
// child workflow type.
const (
	NodeCode        = "Code"
	NodeVerify      = "Verify"
	NodePlan        = "Plan"
	NodeResearch    = "Research"
	NodeCheckStatus = "CheckStatus"
	NodeSummarize   = "Summarize"
	NodeReview      = "Review"
	NodeIteration   = WorkflowIteration
)

// The expected outcomes (Scenario.Want).
const (
	WantCompleted = "completed"
	WantHalted    = "halted"
)

// How a steered scenario gets back on course (Scenario.Steer): each is one
// rung of the guard's recovery ladder.
const (
	// SteerWarning: the agent heeds the guard's warning; no halt.
	SteerWarning = "warning"
	// SteerReviewer: the loop halts, and the workflow's halt handler asks a
	// reviewer, whose guidance the agent follows; no human.
	SteerReviewer = "reviewer"
	// SteerHuman: the loop halts, and a human resumes it with
	// Scenario.Guidance, which the agent follows.
	SteerHuman = "human"
)

// Scenario is a sample run and what the guard should make of it.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Workflow is the workflow type to start, with Input.
	Workflow string    `json:"workflow"`
	Input    LoopInput `json:"input"`
	// Want is WantCompleted (the guard never halts it) or WantHalted.
	Want string `json:"want"`
	// WantReason is the halt reason when Want is WantHalted, and the
	// reason of the warning or halt a steered scenario recovers from.
	WantReason protocol.HaltReason `json:"wantReason,omitempty"`
	// Steer is how a scenario that completes is steered back on course
	// (SteerWarning, SteerReviewer, SteerHuman); "" if it needs no
	// steering.
	Steer string `json:"steer,omitempty"`
	// Guidance is what the human tells the agent when resuming a
	// SteerHuman scenario's halt.
	Guidance string `json:"guidance,omitempty"`
}

// Scenarios lists every sample scenario with the outcome the guard, set up
// with GuardOptions and otherwise default thresholds, should produce. The
// table at the top of this file says which detector trips, on which call.
func Scenarios() []Scenario {
	coderTask := "fix the failing tests in ./parser, ./render and ./cache"
	in := func(scenario, task string) LoopInput {
		return LoopInput{Scenario: scenario, Task: task, MaxTurns: DefaultMaxTurns}
	}
	return []Scenario{
		{
			Name:        activities.ScenarioConverging,
			Description: "each patch fixes more tests (7 → 4 → 2 → 0 failing); the fourth passes",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioConverging, coderTask),
			Want:        WantCompleted,
		},
		{
			Name:        activities.ScenarioIdenticalPatch,
			Description: "the coder re-proposes the same patch and gets the same verdict",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioIdenticalPatch, coderTask),
			Want:        WantHalted,
			WantReason:  protocol.ReasonStalled,
		},
		{
			Name:        activities.ScenarioSameFailingTests,
			Description: "every patch differs, but the same 4 tests keep failing",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioSameFailingTests, coderTask),
			Want:        WantHalted,
			WantReason:  protocol.ReasonStalled,
		},
		{
			Name:        activities.ScenarioOscillating,
			Description: "the coder flips between a strict and a lenient parser (patch A / patch B)",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioOscillating, coderTask),
			Want:        WantHalted,
			WantReason:  protocol.ReasonOscillating,
		},
		{
			Name:        activities.ScenarioRepeatedError,
			Description: "the verifier's sandbox is broken: the same non-retryable error every turn",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioRepeatedError, coderTask),
			Want:        WantHalted,
			WantReason:  protocol.ReasonRepeatedError,
		},
		{
			Name:        activities.ScenarioBudget,
			Description: "slow progress that never converges (40 → 39 → 38 … failing): only the iteration budget stops it",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioBudget, "fix the 41 failing tests of ./suite"),
			Want:        WantHalted,
			WantReason:  protocol.ReasonBudgetExceeded,
		},
		{
			Name:        activities.ScenarioPolling,
			Description: "a CI job polled 11 times (repeating itself) until done: the exempt poller never halts",
			Workflow:    WorkflowPolling,
			Input:       in(activities.ScenarioPolling, "wait for the CI run"),
			Want:        WantCompleted,
		},
		{
			Name:        activities.ScenarioPlannerResearch,
			Description: `the planner keeps needing to assess the auth module or the session store; the researcher keeps answering "already done"`,
			Workflow:    WorkflowPlannerResearcher,
			Input:       in(activities.ScenarioPlannerResearch, "plan the session-to-token migration"),
			Want:        WantHalted,
			WantReason:  protocol.ReasonOscillating,
		},
		{
			Name:        activities.ScenarioChildConverging,
			Description: "the converging coder and verifier, one child workflow per iteration",
			Workflow:    WorkflowChildIteration,
			Input:       in(activities.ScenarioChildConverging, coderTask),
			Want:        WantCompleted,
		},
		{
			Name:        activities.ScenarioChildStalled,
			Description: "the same patch and verdict from every child workflow",
			Workflow:    WorkflowChildIteration,
			Input:       in(activities.ScenarioChildStalled, coderTask),
			Want:        WantHalted,
			WantReason:  protocol.ReasonStalled,
		},
		{
			Name:        activities.ScenarioHeedsWarning,
			Description: "the coder re-proposes the same patch until the guard warns it, then changes approach: no halt, no human",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioHeedsWarning, coderTask),
			Want:        WantCompleted,
			WantReason:  protocol.ReasonStalled,
			Steer:       SteerWarning,
		},
		{
			Name:        activities.ScenarioReviewed,
			Description: "the coder ignores the warning and halts; the workflow's halt handler asks a reviewer, whose guidance the coder follows: no human",
			Workflow:    WorkflowCoderVerifier,
			Input:       LoopInput{Scenario: activities.ScenarioReviewed, Task: coderTask, MaxTurns: DefaultMaxTurns, Review: true},
			Want:        WantCompleted,
			WantReason:  protocol.ReasonStalled,
			Steer:       SteerReviewer,
		},
		{
			Name:        activities.ScenarioGuided,
			Description: "the coder ignores the warning and halts; a human resumes with guidance, which the coder follows",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioGuided, coderTask),
			Want:        WantCompleted,
			WantReason:  protocol.ReasonStalled,
			Steer:       SteerHuman,
			Guidance:    activities.OperatorGuidance,
		},
	}
}

// GuardOptions are the guard options the samples need: the simulated
// timestamp ignored on every node, the verifier's (and the iteration
// child's) failing test count as the metric, token costs, and the poller
// exempt. Every threshold keeps its default. Each stuck loop is warned once
// before it halts (Warnings: 1): an agent that reads its notice can change
// approach without a human.
func GuardOptions() interceptor.Options {
	return interceptor.Options{
		Warnings:     1,
		IgnoreFields: []string{"generatedAt"},
		Nodes: map[string]interceptor.NodeOptions{
			NodeCode:        {CostField: "cost"},
			NodeVerify:      {MetricField: "failing", CostField: "cost"},
			NodePlan:        {CostField: "cost"},
			NodeResearch:    {CostField: "cost"},
			NodeSummarize:   {CostField: "cost"},
			NodeReview:      {CostField: "cost"},
			NodeCheckStatus: {Exempt: true},
			NodeIteration:   {MetricField: "failing", CostField: "cost"},
		},
	}
}

// Workflows returns the sample workflows Register registers, for
// interceptor.CheckWorkflows.
func Workflows() []any {
	return []any{CoderVerifierLoop, PlannerResearcherLoop, ChildIterationLoop, IterationWorkflow, PollingJob, Supervisor, ChatAgent, ParallelToolAgent}
}

// Register registers the sample workflows and agents with a worker (or a
// test environment).
func Register(r worker.Registry) {
	for _, wf := range Workflows() {
		r.RegisterWorkflow(wf)
	}
	r.RegisterActivity(&activities.Agents{})
	r.RegisterActivity(&activities.ChatTools{})
	r.RegisterActivity(&activities.ParallelTools{})
}
