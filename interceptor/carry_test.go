package interceptor_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
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
	assert.Equal(t, interceptor.ReasonBudgetExceeded, halted.Halt.HaltReason)
	require.NotEmpty(t, halted.Nodes)
	assert.Equal(t, 4, halted.Nodes[0].Steps)
}
