// The sample scenarios, and what the guard (GuardOptions, otherwise default
// thresholds) does with each. Cn/Vn are the coder's/verifier's n-th call,
// Pn/Rn the planner's/researcher's, In the n-th child workflow. The guard
// reads a result at the next guarded call, so the result that trips a
// detector halts the call right after it: the loop pauses there until a
// human resumes or escalates. TestScenariosWithGuard checks every line.
//
//	scenario            workflow               want                    first detector to trip, and where
//	converging          CoderVerifierLoop      completed               -: new patch each turn, failing 7→4→2→0 improves every turn; passes at V4
//	identical-patch     CoderVerifierLoop      halted stalled          identical_output: Code→Verify the same 3 times (C1=C2=C3), read at V3's call (turn 3)
//	same-failing-tests  CoderVerifierLoop      halted stalled          no_improvement on Verify: failing stays 4, V2,V3,V4 do not beat V1; read at C5's call (turn 5)
//	oscillating         CoderVerifierLoop      halted oscillating      output_oscillation: Code→Verify with A,3,B,2 twice = 2 periods at V4, read at C5's call (turn 5); detection generation 2 read Code's A,B,A,B at V4's call (turn 4)
//	repeated-error      CoderVerifierLoop      halted repeated_error   repeated_error on Verify: V1..V4 fail with the same SandboxUnavailable error after different patches, read at C5's call (turn 5; generation 2: 3 failures, turn 4)
//	budget              CoderVerifierLoop      halted budget_exceeded  cycle_iterations on cycle Code→Verify: 8/8 iterations, refused at C9 (turn 9); every result is new and the metric improves, so nothing else trips (node_calls would at C11)
//	polling             PollingJob             completed               -: 11 polls, 3 identical statuses in a row, but CheckStatus is Exempt; Summarize runs once
//	planner-research    PlannerResearcherLoop  halted oscillating      output_oscillation: Plan→Research with auth/session twice = 2 periods at R4, read at P5's call (step 5; generation 2: at R4's call); no output repeats in a row, so nothing stalls first
//	child-converging    ChildIterationLoop     completed               -: one IterationWorkflow per turn, failing 7→4→2→0
//	child-stalled       ChildIterationLoop     halted stalled          identical_output on IterationWorkflow: I1=I2=I3 (same patch, 4 failing), read at I4's call (turn 4)
//
// Without the guard every "halted" scenario runs to LoopInput.MaxTurns and
// ends with Outcome "gave_up": that is what the guard is for.

package workflows

import (
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
	NodeIteration   = WorkflowIteration
)

// The expected outcomes (Scenario.Want).
const (
	WantCompleted = "completed"
	WantHalted    = "halted"
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
	// WantReason is the halt reason when Want is WantHalted.
	WantReason interceptor.HaltReason `json:"wantReason,omitempty"`
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
			WantReason:  interceptor.ReasonStalled,
		},
		{
			Name:        activities.ScenarioSameFailingTests,
			Description: "every patch differs, but the same 4 tests keep failing",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioSameFailingTests, coderTask),
			Want:        WantHalted,
			WantReason:  interceptor.ReasonStalled,
		},
		{
			Name:        activities.ScenarioOscillating,
			Description: "the coder flips between a strict and a lenient parser (patch A / patch B)",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioOscillating, coderTask),
			Want:        WantHalted,
			WantReason:  interceptor.ReasonOscillating,
		},
		{
			Name:        activities.ScenarioRepeatedError,
			Description: "the verifier's sandbox is broken: the same non-retryable error every turn",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioRepeatedError, coderTask),
			Want:        WantHalted,
			WantReason:  interceptor.ReasonRepeatedError,
		},
		{
			Name:        activities.ScenarioBudget,
			Description: "slow progress that never converges (40 → 39 → 38 … failing): only the iteration budget stops it",
			Workflow:    WorkflowCoderVerifier,
			Input:       in(activities.ScenarioBudget, "fix the 41 failing tests of ./suite"),
			Want:        WantHalted,
			WantReason:  interceptor.ReasonBudgetExceeded,
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
			WantReason:  interceptor.ReasonOscillating,
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
			WantReason:  interceptor.ReasonStalled,
		},
	}
}

// GuardOptions are the guard options the samples need: the simulated
// timestamp ignored on every node, the verifier's (and the iteration
// child's) failing test count as the metric, token costs, and the poller
// exempt. Every threshold keeps its default.
func GuardOptions() interceptor.Options {
	return interceptor.Options{
		IgnoreFields: []string{"generatedAt"},
		Nodes: map[string]interceptor.NodeOptions{
			NodeCode:        {CostField: "cost"},
			NodeVerify:      {MetricField: "failing", CostField: "cost"},
			NodePlan:        {CostField: "cost"},
			NodeResearch:    {CostField: "cost"},
			NodeSummarize:   {CostField: "cost"},
			NodeCheckStatus: {Exempt: true},
			NodeIteration:   {MetricField: "failing", CostField: "cost"},
		},
	}
}

// Register registers the sample workflows and agents with a worker (or a
// test environment).
func Register(r worker.Registry) {
	r.RegisterWorkflow(CoderVerifierLoop)
	r.RegisterWorkflow(PlannerResearcherLoop)
	r.RegisterWorkflow(ChildIterationLoop)
	r.RegisterWorkflow(IterationWorkflow)
	r.RegisterWorkflow(PollingJob)
	r.RegisterWorkflow(Supervisor)
	r.RegisterActivity(&activities.Agents{})
}
