package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

func halt(wf string, seq int) protocol.HaltEvent {
	return protocol.HaltEvent{
		WorkflowID: wf,
		RunID:      "run-" + wf,
		Seq:        seq,
		HaltReason: protocol.ReasonStalled,
		Node:       NodeCode,
		CycleID:    "Code+Verify",
		Message:    fmt.Sprintf("halt %d of %s", seq, wf),
	}
}

func newSupervisorEnv() *testsuite.TestWorkflowEnvironment {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	Register(env)
	return env
}

func queryHalts(t *testing.T, env *testsuite.TestWorkflowEnvironment) []protocol.HaltEvent {
	t.Helper()
	val, err := env.QueryWorkflow(HaltedQuery)
	require.NoError(t, err)
	var halts []protocol.HaltEvent
	require.NoError(t, val.Get(&halts))
	return halts
}

func seqs(halts []protocol.HaltEvent) []int {
	out := make([]int, 0, len(halts))
	for _, h := range halts {
		out = append(out, h.Seq)
	}
	return out
}

func TestSupervisorQuery(t *testing.T) {
	env := newSupervisorEnv()
	var before, after []protocol.HaltEvent
	env.RegisterDelayedCallback(func() {
		before = queryHalts(t, env)
		env.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf-a", 1))
		env.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf-b", 1))
		env.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf-a", 1)) // delivered twice
		env.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf-a", 2))
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		after = queryHalts(t, env)
		env.CancelWorkflow()
	}, 2*time.Minute)
	env.ExecuteWorkflow(Supervisor)

	require.True(t, env.IsWorkflowCompleted())
	require.True(t, temporal.IsCanceledError(env.GetWorkflowError()), "%v", env.GetWorkflowError())
	require.Empty(t, before)
	require.Len(t, after, 3, "the duplicate is kept once")
	require.Equal(t, []string{"wf-a", "wf-b", "wf-a"}, []string{after[0].WorkflowID, after[1].WorkflowID, after[2].WorkflowID})
	require.Equal(t, []int{1, 1, 2}, seqs(after), "newest last")
	require.Equal(t, "halt 2 of wf-a", after[2].Message)
	require.Equal(t, protocol.ReasonStalled, after[2].HaltReason)
}

func TestSupervisorBounded(t *testing.T) {
	env := newSupervisorEnv()
	var got []protocol.HaltEvent
	const sent = SupervisorMaxHalts + 30
	env.RegisterDelayedCallback(func() {
		for i := 1; i <= sent; i++ {
			env.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf", i))
		}
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		got = queryHalts(t, env)
		env.CancelWorkflow()
	}, 2*time.Minute)
	env.ExecuteWorkflow(Supervisor)

	require.Len(t, got, SupervisorMaxHalts)
	require.Equal(t, 31, got[0].Seq, "the oldest are dropped")
	require.Equal(t, sent, got[len(got)-1].Seq)
}

func TestSupervisorContinuesAsNew(t *testing.T) {
	env := newSupervisorEnv()
	const extra = 5
	var carried []protocol.HaltEvent
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		memo := args.Get(0).(map[string]any)
		carried = memo[SupervisorMemoKey].([]protocol.HaltEvent)
	}).Return(nil).Once()
	env.RegisterDelayedCallback(func() {
		for i := 1; i < SupervisorSignalsPerRun; i++ {
			env.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf", i))
		}
		// The last signals of the run arrive together, in one workflow
		// task: the surplus is drained before the continue-as-new, not lost.
		for i := SupervisorSignalsPerRun; i < SupervisorSignalsPerRun+extra; i++ {
			env.SignalWorkflowSkippingWorkflowTask(protocol.DefaultHaltedSignal, halt("wf", i))
		}
		env.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf", SupervisorSignalsPerRun+extra))
	}, time.Minute)
	env.ExecuteWorkflow(Supervisor)

	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	require.Equal(t, WorkflowSupervisor, can.WorkflowType.Name)
	require.Len(t, carried, SupervisorMaxHalts)
	require.Equal(t, SupervisorSignalsPerRun+extra, carried[len(carried)-1].Seq, "the drained signals are carried")
	env.AssertExpectations(t)

	// The next run starts with the carried halts.
	next := newSupervisorEnv()
	require.NoError(t, next.SetMemoOnStart(map[string]any{SupervisorMemoKey: carried}))
	var got []protocol.HaltEvent
	next.RegisterDelayedCallback(func() {
		next.SignalWorkflow(protocol.DefaultHaltedSignal, halt("wf-new", 1))
	}, time.Minute)
	next.RegisterDelayedCallback(func() {
		got = queryHalts(t, next)
		next.CancelWorkflow()
	}, 2*time.Minute)
	next.ExecuteWorkflow(Supervisor)
	require.Len(t, got, SupervisorMaxHalts)
	require.Equal(t, carried[1:], got[:SupervisorMaxHalts-1])
	require.Equal(t, "wf-new", got[SupervisorMaxHalts-1].WorkflowID)
}

func TestSupervisorContinuesAsNewWhenSuggested(t *testing.T) {
	env := newSupervisorEnv()
	env.SetContinueAsNewSuggested(true)
	env.OnUpsertMemo(mock.Anything).Return(nil).Once()
	env.ExecuteWorkflow(Supervisor)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
}

func TestAppendHalt(t *testing.T) {
	var hs []protocol.HaltEvent
	// Events without an identity are never deduplicated.
	hs = appendHalt(hs, protocol.HaltEvent{Message: "x"})
	hs = appendHalt(hs, protocol.HaltEvent{Message: "x"})
	require.Len(t, hs, 2)
	hs = appendHalt(hs, halt("wf", 1))
	hs = appendHalt(hs, halt("wf", 1))
	other := halt("wf", 1)
	other.RunID = "another run"
	hs = appendHalt(hs, other)
	require.Len(t, hs, 4)
}
