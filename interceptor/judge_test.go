package interceptor_test

import (
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/internal/judge"
	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

func judgeInfo(typ string) *workflow.Info {
	return &workflow.Info{WorkflowType: workflow.Type{Name: typ}, WorkflowExecution: workflow.Execution{ID: "w", RunID: "r"}}
}

// TestJudge: the Judge gives a call the guard's verdicts from plain
// inputs: identical results halt at the guard's threshold, an error
// repeated is a repeated error, and an execution out of scope is not
// judged.
func TestJudge(t *testing.T) {
	_, err := judge.New(interceptor.Options{Window: -1})
	var oe *interceptor.OptionError
	require.ErrorAs(t, err, &oe)

	j, err := judge.New(interceptor.Options{Workflows: []string{"Agent"}})
	require.NoError(t, err)
	assert.False(t, j.Start(judgeInfo("Other"), time.Unix(0, 0)))
	assert.Equal(t, -1, j.Call(interceptor.KindActivity, "Code", nil), "not guarded: not judged")

	j, err = judge.New(interceptor.Options{})
	require.NoError(t, err)
	now := time.Unix(1000, 0)
	require.True(t, j.Start(judgeInfo("Agent"), now))
	same, err := converter.GetDefaultDataConverter().ToPayloads("the same patch")
	require.NoError(t, err)
	for i := 0; i < 4; i++ {
		now = now.Add(time.Second)
		j.Now(now)
		id := j.Call(interceptor.KindActivity, "Code", nil)
		require.GreaterOrEqual(t, id, 0)
		j.Result(id, same, nil, nil)
	}
	j.Now(now.Add(time.Second))
	j.Call(interceptor.KindActivity, "Code", nil)
	v := j.Verdicts()
	require.NotEmpty(t, v)
	require.NotNil(t, v[0].Halt)
	assert.Equal(t, protocol.ReasonStalled, v[0].Halt.HaltReason)
	assert.Equal(t, "Code", v[0].Halt.Node)
	assert.Equal(t, protocol.OnHaltPause, v[0].OnHalt, "what the halt would do")
	assert.Equal(t, 4, v[0].Call, "the call after three identical results")
	assert.Equal(t, 5, j.Calls(), "answered as observe: the calls go on")

	j, err = judge.New(interceptor.Options{})
	require.NoError(t, err)
	require.True(t, j.Start(judgeInfo("Agent"), now))
	for i := 0; i < 4; i++ {
		id := j.Call(interceptor.KindActivity, "Verify", nil)
		j.Result(id, nil, temporal.NewApplicationError("sandbox unreachable", "SandboxDown"), nil)
	}
	v = j.Verdicts()
	require.NotEmpty(t, v)
	assert.Equal(t, protocol.ReasonRepeatedError, v[0].Halt.HaltReason)
}
