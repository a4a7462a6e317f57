// The sample scenarios, and what the guard (GuardOptions, otherwise default
// thresholds) does with each. "Cn"/"Vn" are the coder's/verifier's n-th
// call, "Pn"/"Rn" the planner's/researcher's, "In" the n-th child workflow.
// The guard reads a result at the next guarded call, so a detector tripped
// by a result halts the call right after it.
//
//	scenario            workflow               want                  why (first detector to trip)
//	converging          CoderVerifierLoop      completed             failing 7→4→2→0: the metric improves every turn, patches all differ; passes at turn 4
//	identical-patch     CoderVerifierLoop      halted stalled        C1=C2=C3: identical_output (3 in a row) on Code, read at V3's call
//	same-failing-tests  CoderVerifierLoop      halted stalled        new patch each turn, Verify's failing stays 4: no_improvement on Verify (3 steps without a better metric: V4, or V3 if the first one counts), halts C5 (C4)
//	oscillating         CoderVerifierLoop      halted oscillating    patches A,B,A,B: output_oscillation on Code at C4 (2 periods), read at V4's call; Verify's 3,2,3,2 cannot stall before V5
//	repeated-error      CoderVerifierLoop      halted repeated_error V1,V2,V3 fail with the same SandboxUnavailable error: repeated_error on Verify, read at C4's call
//	budget              CoderVerifierLoop      halted budget_exceeded new patch and a better metric (40,39,38…) every turn: only cycle_iterations (8) trips, around C9/C10, before node_calls (C11)
//	polling             PollingJob             completed             11 polls with 3 identical statuses in a row, but CheckStatus is Exempt; Summarize runs once
//	planner-research    PlannerResearcherLoop  halted oscillating    planner: assess auth / session / auth / session…, researcher: "already done" for each: output_oscillation on Plan at P4, read at R4's call; no output repeats twice in a row, so nothing stalls first
//	child-converging    ChildIterationLoop     completed             one IterationWorkflow per turn, failing 7→4→2→0
//	child-stalled       ChildIterationLoop     halted stalled        I1=I2=I3 (same patch, 4 failing): identical_output (and no_improvement) on IterationWorkflow, read at I4's call
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
