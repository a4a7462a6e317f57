package interceptor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// stubbornAgent ignores warnings: the same answer every time. It counts
// the warnings it was shown.
type stubbornAgent struct{ warned []int }

func (a *stubbornAgent) Run(ctx context.Context, turn int) (string, error) {
	if n, ok := interceptor.NoticeFrom(ctx); ok && n.Warning != nil {
		a.warned = append(a.warned, n.Warning.N)
	}
	return "the same patch", nil
}

// warnedAgent changes approach for good as soon as a call carries a
// warning.
type warnedAgent struct{ changed bool }

func (a *warnedAgent) Run(ctx context.Context, turn int) (string, error) {
	if n, ok := interceptor.NoticeFrom(ctx); ok && n.Warning != nil {
		a.changed = true
	}
	if a.changed {
		return fmt.Sprintf("a new approach, turn %d", turn), nil
	}
	return "the same patch", nil
}

// TestWarningsBeforeHalt: with Options.Warnings 2, a loop that ignores
// its warnings is warned twice, its calls carrying each warning, and then
// halts; the halt lists the warnings it did not heed. Each warning costs
// the loop one more detector window, no more.
func TestWarningsBeforeHalt(t *testing.T) {
	agent := &stubbornAgent{}
	env := newAgentEnv(t, interceptor.Options{Warnings: 2, Grain: interceptor.GrainToolCall}, guidedLoop, agent.Run) // budgets out of the way
	halted := statusThen(t, env, time.Hour, func() {
		env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ana"})
	})
	env.ExecuteWorkflow(guidedLoop, 20, false)
	require.True(t, env.IsWorkflowCompleted())

	require.NotNil(t, halted.Halt, "the warnings were ignored")
	assert.Equal(t, 1, halted.Halts, "one halt, after two warnings")
	assert.Equal(t, 2, halted.Warnings)
	require.Len(t, halted.Halt.Warnings, 2, "the halt lists the unheeded warnings")
	assert.Equal(t, 1, halted.Halt.Warnings[0].N)
	assert.Equal(t, 2, halted.Halt.Warnings[1].N)
	assert.NotEmpty(t, halted.Halt.Warnings[0].Directive)
	assert.Equal(t, []string{"HeedfulAgent"}, halted.Halt.Warnings[0].Nodes)
	// Calls 1-3 repeat (the first trip), calls 4-6 carry warning 1 and
	// repeat, calls 7-9 carry warning 2, and the 10th is paused: two
	// windows of 3 later than without warnings.
	assert.Equal(t, []int{1, 1, 1, 2, 2, 2}, agent.warned)
	assert.Equal(t, 9, halted.TotalCalls)
}

// TestHeededWarningNeedsNoHuman: an agent that changes approach when
// warned never halts; once a window of its calls has gone by without
// another trip, the warning is no longer in force.
func TestHeededWarningNeedsNoHuman(t *testing.T) {
	env := newAgentEnv(t, interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall}, guidedLoop, (&warnedAgent{}).Run)
	env.ExecuteWorkflow(guidedLoop, 20, false)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	st := status(t, env)
	assert.Zero(t, st.Halts)
	assert.Equal(t, 1, st.Warnings)
	assert.Nil(t, st.Warning, "heeded: no longer in force")
	assert.Equal(t, "the same patch", out[2])
	assert.Contains(t, out[3], "a new approach, turn 3")
	assert.Equal(t, "a new approach, turn 19", out[19])
}

// TestWarningsAreOffByDefault: zero Options keep today's ladder: the
// first trip halts.
func TestWarningsAreOffByDefault(t *testing.T) {
	env := newAgentEnv(t, interceptor.Options{}, guidedLoop, (&warnedAgent{}).Run)
	halted := statusThen(t, env, time.Hour, func() {
		env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ana"})
	})
	env.ExecuteWorkflow(guidedLoop, 20, false)
	require.NotNil(t, halted.Halt)
	assert.Zero(t, halted.Warnings)
	assert.Empty(t, halted.Halt.Warnings)
	assert.Equal(t, 3, halted.TotalCalls)
}

// memoEntry is what a test reads of the guard's memo entry.
type memoEntry struct {
	State    protocol.State `json:"state"`
	Warnings []struct {
		N, Of   int
		Reason  protocol.HaltReason
		Node    string
		Message string
	} `json:"warnings"`
}

// String renders a memo entry as its state and its warnings' n/of.
func (m memoEntry) String() string {
	s := string(m.State)
	for _, w := range m.Warnings {
		s += fmt.Sprintf(" %d/%d", w.N, w.Of)
	}
	return s
}

// TestWarningsInTheMemo (guard version 8): a warning, and a warning
// heeded, upsert the memo, which lists the warnings in force; a halt's
// memo lists the warnings it answered.
func TestWarningsInTheMemo(t *testing.T) {
	tests := []struct {
		name   string
		onHalt protocol.OnHalt
		agent  func(context.Context, int) (string, error)
		want   []string
	}{
		{"ignored", "", (&stubbornAgent{}).Run, []string{"running 1/2", "running 1/2 2/2", "halted 1/2 2/2", "escalated 1/2 2/2"}},
		{"heeded", "", (&warnedAgent{}).Run, []string{"running 1/2", "running"}},
		// An observed halt publishes nothing; the next call shows that it
		// answered the warnings, and the loop's warnings start over.
		{"ignored, observed", protocol.OnHaltObserve, (&stubbornAgent{}).Run,
			[]string{"running 1/2", "running 1/2 2/2", "running", "running 1/2", "running 1/2 2/2", "running"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newAgentEnv(t, interceptor.Options{Warnings: 2, Grain: interceptor.GrainToolCall, OnHalt: tt.onHalt}, guidedLoop, tt.agent)
			var got []string
			var first memoEntry
			env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
				data, err := json.Marshal(args.Get(0).(map[string]any)["loopguard"])
				require.NoError(t, err)
				var m memoEntry
				require.NoError(t, json.Unmarshal(data, &m))
				if got == nil {
					first = m
				}
				got = append(got, m.String())
			}).Return(nil)
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ana"})
			}, time.Hour)
			env.ExecuteWorkflow(guidedLoop, 20, false)
			require.True(t, env.IsWorkflowCompleted())
			assert.Equal(t, tt.want, got)
			require.NotEmpty(t, first.Warnings)
			w := first.Warnings[0]
			assert.Equal(t, protocol.ReasonStalled, w.Reason)
			assert.Equal(t, "HeedfulAgent", w.Node)
			assert.NotEmpty(t, w.Message)
		})
	}
}
