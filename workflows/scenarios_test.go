package workflows

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

func TestScenarios(t *testing.T) {
	scs := Scenarios()
	var names []string
	for _, sc := range scs {
		names = append(names, sc.Name)
		require.Equal(t, sc.Name, sc.Input.Scenario)
		require.NotEmpty(t, sc.Description, sc.Name)
		require.Contains(t, []string{WorkflowCoderVerifier, WorkflowPlannerResearcher, WorkflowChildIteration, WorkflowPolling}, sc.Workflow, sc.Name)
		switch sc.Want {
		case WantCompleted:
			// A steered scenario recovers from a warning or halt.
			require.Equal(t, sc.Steer != "", sc.WantReason != "", sc.Name)
			require.Equal(t, sc.Steer == SteerHuman, sc.Guidance != "", sc.Name)
			require.Equal(t, sc.Steer == SteerReviewer, sc.Input.Review, sc.Name)
		case WantHalted:
			require.Contains(t, []protocol.HaltReason{
				protocol.ReasonStalled, protocol.ReasonOscillating,
				protocol.ReasonRepeatedError, protocol.ReasonBudgetExceeded,
			}, sc.WantReason, sc.Name)
		default:
			t.Fatalf("%s: bad Want %q", sc.Name, sc.Want)
		}
	}
	require.Equal(t, activities.ScenarioNames(), names, "every scenario, once, in the activities' order")

	b, err := json.Marshal(scs[1])
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"identical-patch","description":"the coder re-proposes the same patch and gets the same verdict",
		"workflow":"CoderVerifierLoop","input":{"scenario":"identical-patch","task":"fix the failing tests in ./parser, ./render and ./cache","maxTurns":20},
		"want":"halted","wantReason":"stalled"}`, string(b))
}

// jsonKeys returns the JSON keys of a result type.
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// TestGuardOptions checks the options against the samples: node names that
// exist, field paths that the results have.
func TestGuardOptions(t *testing.T) {
	o := GuardOptions()
	require.Equal(t, []string{"generatedAt"}, o.IgnoreFields)
	require.Equal(t, 1, o.Warnings, "one warning before each halt")

	results := map[string]any{
		NodeCode:        activities.Patch{},
		NodeVerify:      activities.Verdict{},
		NodePlan:        activities.PlanStep{},
		NodeResearch:    activities.Findings{},
		NodeCheckStatus: activities.JobStatus{},
		NodeSummarize:   activities.Summary{},
		NodeReview:      activities.ReviewNote{},
		NodeIteration:   IterationResult{},
	}
	// Every activity method is a node with options, and nothing else is.
	agents := reflect.TypeOf(&activities.Agents{})
	var nodes []string
	for i := range agents.NumMethod() {
		nodes = append(nodes, agents.Method(i).Name)
	}
	nodes = append(nodes, WorkflowIteration)
	slices.Sort(nodes)
	var optioned []string
	for name := range o.Nodes {
		optioned = append(optioned, name)
	}
	slices.Sort(optioned)
	require.Equal(t, nodes, optioned)

	for name, n := range o.Nodes {
		keys := jsonKeys(t, results[name])
		for _, ignored := range o.IgnoreFields {
			require.Contains(t, keys, ignored, name)
		}
		for _, p := range []string{n.MetricField, n.CostField} {
			if p != "" {
				require.Contains(t, keys, p, name)
			}
		}
		require.Empty(t, n.ProgressFields, name)
		require.Empty(t, n.MaxCalls, name, "thresholds keep their defaults")
	}
	require.True(t, o.Nodes[NodeCheckStatus].Exempt)
	require.Equal(t, "failing", o.Nodes[NodeVerify].MetricField)
	require.Equal(t, "failing", o.Nodes[NodeIteration].MetricField)
	for name, n := range o.Nodes {
		require.Equal(t, name == NodeCheckStatus, n.Exempt, name)
	}

	// Nothing but the node rules, the ignored field and the warning:
	// default thresholds.
	o.IgnoreFields, o.Nodes, o.Warnings = nil, nil, 0
	require.True(t, reflect.ValueOf(o).IsZero(), "GuardOptions sets no threshold: %+v", o)
}

// ExampleScenarios lists the sample scenarios and what the guard does with
// each.
func ExampleScenarios() {
	for _, sc := range Scenarios() {
		want := sc.Want
		switch {
		case sc.Steer != "":
			want += fmt.Sprintf(" (%s, steered by the %s)", sc.WantReason, sc.Steer)
		case sc.WantReason != "":
			want += " " + string(sc.WantReason)
		}
		fmt.Printf("%-19s %-22s %s\n", sc.Name, sc.Workflow, want)
	}
	// Output:
	// converging          CoderVerifierLoop      completed
	// identical-patch     CoderVerifierLoop      halted stalled
	// same-failing-tests  CoderVerifierLoop      halted stalled
	// oscillating         CoderVerifierLoop      halted oscillating
	// repeated-error      CoderVerifierLoop      halted repeated_error
	// budget              CoderVerifierLoop      halted budget_exceeded
	// polling             PollingJob             completed
	// planner-research    PlannerResearcherLoop  halted oscillating
	// child-converging    ChildIterationLoop     completed
	// child-stalled       ChildIterationLoop     halted stalled
	// heeds-warning       CoderVerifierLoop      completed (stalled, steered by the warning)
	// reviewed            CoderVerifierLoop      completed (stalled, steered by the reviewer)
	// guided              CoderVerifierLoop      completed (stalled, steered by the human)
}
