package interceptor_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

func TestContinueAsNewCarriesState(t *testing.T) {
	opts := interceptor.Options{MaxCallsPerNode: 4}
	give := distinct(6, "Research")

	first := newEnv(t, opts)
	first.ExecuteWorkflow(continuingLoop, give, 3)
	require.True(t, first.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(first.GetWorkflowError(), &can), "want continue-as-new, got %v", first.GetWorkflowError())
	require.NotNil(t, can.Header)
	require.Contains(t, can.Header.Fields, "loopguard-carry")

	// The next run starts with the carried header: three calls are already
	// spent, so the second call of this run is the fifth and exceeds 4.
	second := newEnv(t, interceptor.Options{MaxCallsPerNode: 100}) // a redeploy with other options
	second.SetHeader(can.Header)
	halted := statusThen(t, second, decideAfter, func() {
		second.SignalWorkflow("escalate", nil)
	})
	second.ExecuteWorkflow(continuingLoop, give[3:], 0)
	res := result(t, second)
	assert.True(t, res.Escalated)
	assert.Equal(t, 2, res.Calls)
	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonBudgetExceeded, halted.Halt.HaltReason)
	require.NotEmpty(t, halted.Nodes)
	assert.Equal(t, 4, halted.Nodes[0].Steps)
}

// TestContinueAsNewCarriesTheLadder: the warnings issued, the warnings a
// loop has not answered yet and the guidance in force cross
// continue-as-new (guard version 7); from guard version 9 (issue 22 item
// 7) the new run shows the guidance in its current details, and the
// decision that gave it in lastDecision.
func TestContinueAsNewCarriesTheLadder(t *testing.T) {
	opts := interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall} // budgets out of the way
	first := newEnv(t, opts)
	// Warned at the third identical call, it goes on and trips again: the
	// halt is resumed with guidance; the run then continues as new.
	first.RegisterDelayedCallback(func() {
		first.SignalWorkflow("resume", protocol.ResumeRequest{By: "ana", Guidance: "use the other fixture"})
	}, decideAfter)
	first.ExecuteWorkflow(continuingLoop, repeat(8, "Code", "same"), 7)
	require.True(t, first.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(first.GetWorkflowError(), &can), "want continue-as-new, got %v", first.GetWorkflowError())

	second := newEnv(t, opts)
	second.SetHeader(can.Header)
	second.ExecuteWorkflow(continuingLoop, distinct(2, "Code"), 0)
	result(t, second)
	st := status(t, second)
	assert.Equal(t, 1, st.Warnings, "the warning issued in the first run")
	require.NotNil(t, st.Guidance, "the guidance in force")
	assert.Equal(t, "use the other fixture", st.Guidance.Text)
	assert.Equal(t, []string{"Code"}, st.Guidance.Nodes)
	require.NotNil(t, st.LastDecision, "the decision that gave the guidance")
	assert.Equal(t, "ana", st.LastDecision.By)
	assert.Equal(t, "use the other fixture", st.LastDecision.Guidance)
	assert.Contains(t, currentDetails(t, second), "use the other fixture")
}
