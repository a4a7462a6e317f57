package interceptor

import (
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// heldJudge returns a Judge that follows recorded decisions, held at the
// halt a Code call repeating itself meets, at workflow time now.
func heldJudge(t *testing.T, opts Options) (*judge, time.Time) {
	t.Helper()
	j, err := newJudge(opts)
	require.NoError(t, err)
	j.recorded = true // as Pin makes it, with the options given
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := &workflow.Info{WorkflowType: workflow.Type{Name: "Agent"}, WorkflowExecution: workflow.Execution{ID: "w", RunID: "r"}}
	require.True(t, j.Start(info, now))
	same, err := converter.GetDefaultDataConverter().ToPayloads("the same patch")
	require.NoError(t, err)
	for i := 0; i < 10 && !j.Blocked(); i++ {
		now = now.Add(time.Second)
		j.Now(now)
		if id := j.Call(KindActivity, "Code", nil); id >= 0 {
			j.Result(id, same, nil, nil)
		}
	}
	require.True(t, j.Blocked(), "the loop halted and holds its call")
	return j, now
}

// decisionOf is the decision on the Judge's last halt verdict.
func decisionOf(t *testing.T, vs []Verdict) protocol.Decision {
	t.Helper()
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].Halt != nil {
			require.NotNil(t, vs[i].Decision, "the halt was decided")
			return *vs[i].Decision
		}
	}
	t.Fatal("no halt")
	return protocol.Decision{}
}

// TestJudgeFollowsEveryDecision: a recorded halt that holds a call ends
// with the halt handler's resume (its guidance in force, the held call
// judged next) or escalation, a human's decision taken before the
// handler's (which then does not count), or a cancellation (the held
// call is not made); only the guard's pause timer decides it when fired.
func TestJudgeFollowsEveryDecision(t *testing.T) {
	t.Run("handler resumes", func(t *testing.T) {
		j, now := heldJudge(t, Options{})
		calls := j.Calls()
		j.Now(now.Add(time.Minute))
		require.Equal(t, 1, j.Held())
		assert.True(t, j.Handled(protocol.ActionResume, "try another way"))
		assert.False(t, j.Blocked())
		d := decisionOf(t, j.Verdicts())
		assert.Equal(t, protocol.Decision{Action: protocol.ActionResume, By: HandlerBy, HaltSeq: 1, Guidance: "try another way"}, d)
		require.NotNil(t, j.g.guidance)
		assert.Equal(t, "try another way", j.g.guidance.Text)
		assert.GreaterOrEqual(t, j.Call(KindActivity, "Code", nil), 0, "the held call goes on")
		assert.Equal(t, calls+1, j.Calls())
	})
	t.Run("handler escalates", func(t *testing.T) {
		j, _ := heldJudge(t, Options{})
		assert.True(t, j.Handled(protocol.ActionEscalate, ""))
		assert.Equal(t, protocol.ActionEscalate, decisionOf(t, j.Verdicts()).Action)
		assert.Equal(t, phaseEscalated, j.g.pause.phase)
	})
	t.Run("hands over", func(t *testing.T) {
		j, _ := heldJudge(t, Options{})
		assert.False(t, j.Handled("", ""), "an empty action ends nothing")
		assert.True(t, j.Blocked())
	})
	t.Run("human first", func(t *testing.T) {
		j, _ := heldJudge(t, Options{})
		j.g.decideSigned(protocol.ActionResume, request{ResumeRequest: protocol.ResumeRequest{By: "ana"}})
		assert.False(t, j.Handled(protocol.ActionEscalate, ""), "the human's decision came first")
		d := decisionOf(t, j.Verdicts())
		assert.Equal(t, protocol.ActionResume, d.Action)
		assert.Equal(t, "ana", d.By)
	})
	t.Run("canceled", func(t *testing.T) {
		j, now := heldJudge(t, Options{})
		calls := j.Calls()
		j.Cancel()
		j.Now(now.Add(time.Minute))
		j.Wake()
		assert.False(t, j.Blocked())
		assert.Equal(t, protocol.ActionCancel, decisionOf(t, j.Verdicts()).Action)
		assert.False(t, j.Handled(protocol.ActionResume, ""), "nothing holds a call")
		assert.Equal(t, calls, j.Calls(), "the held call is not made")
	})
	t.Run("pause timer", func(t *testing.T) {
		j, now := heldJudge(t, Options{PauseTimeout: time.Hour})
		assert.True(t, j.PauseTimer(time.Hour))
		assert.False(t, j.PauseTimer(time.Second), "a handler's sleep")
		j.Now(now.Add(10 * time.Minute))
		assert.True(t, j.PauseTimer(50*time.Minute), "what is left once a handler handed over")
		assert.False(t, j.PauseTimer(20*time.Minute), "another branch's timer")
	})
}
