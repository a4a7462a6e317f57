package interceptor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// heedfulAgent repeats itself until its call carries guidance, then
// follows it: each answer is new. It returns what it was told too.
func heedfulAgent(ctx context.Context, turn int) (string, error) {
	if n, ok := interceptor.NoticeFrom(ctx); ok && n.Guidance != "" {
		return fmt.Sprintf("turn %d, following %q from %s", turn, n.Guidance, n.By), nil
	}
	return "the same patch", nil
}

// guidedLoop calls the heedful agent n times, as an activity or a local
// activity, and returns its answers.
func guidedLoop(ctx workflow.Context, n int, local bool) ([]string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	var out []string
	for i := range n {
		var s string
		var err error
		if local {
			err = workflow.ExecuteLocalActivity(ctx, "HeedfulAgent", i).Get(ctx, &s)
		} else {
			err = workflow.ExecuteActivity(ctx, "HeedfulAgent", i).Get(ctx, &s)
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// TestGuidanceReachesTheAgent: a resume's guidance is carried, in the
// notice header, by every later call of the halted loop's nodes; the
// agent reads it with NoticeFrom, follows it, and the loop completes.
// Before the halt no call carries a header.
func TestGuidanceReachesTheAgent(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "activity", true: "local activity"}[local], func(t *testing.T) {
			env := newAgentEnv(t, interceptor.Options{}, guidedLoop, heedfulAgent)
			var halted protocol.Status
			env.RegisterDelayedCallback(func() {
				halted = status(t, env)
				env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana", Guidance: "read config/prod.yaml, not config/dev.yaml"})
			}, time.Hour)
			env.ExecuteWorkflow(guidedLoop, 6, local)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var out []string
			require.NoError(t, env.GetWorkflowResult(&out))

			require.NotNil(t, halted.Halt, "the agent repeated itself and halted")
			assert.Equal(t, []string{"the same patch", "the same patch", "the same patch"}, out[:3], "no notice before the halt")
			for i, s := range out[3:] {
				assert.Equal(t, fmt.Sprintf(`turn %d, following "read config/prod.yaml, not config/dev.yaml" from ana`, i+3), s)
			}
			st := status(t, env)
			require.NotNil(t, st.Guidance)
			assert.Equal(t, "read config/prod.yaml, not config/dev.yaml", st.Guidance.Text)
			assert.Equal(t, []string{"HeedfulAgent"}, st.Guidance.Nodes)
			require.NotNil(t, st.LastDecision)
			assert.Equal(t, "read config/prod.yaml, not config/dev.yaml", st.LastDecision.Guidance)
			assert.Equal(t, 1, st.Halts)
		})
	}
}

// TestGuidanceInputErrors: guidance is only a resume's, at most
// MaxGuidanceBytes; a refusal says why and changes nothing.
func TestGuidanceInputErrors(t *testing.T) {
	tests := []struct {
		name   string
		signal string
		give   any
		want   string
	}{
		{"on escalate", protocol.DefaultEscalateSignal, map[string]string{"guidance": "stop"}, "only accepted by resume"},
		{"on halt", protocol.DefaultHaltSignal, map[string]string{"guidance": "stop"}, "only accepted by resume"},
		{"too long", protocol.DefaultResumeSignal, protocol.ResumeRequest{Guidance: strings.Repeat("x", protocol.MaxGuidanceBytes+1)}, "at most 512"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newAgentEnv(t, interceptor.Options{}, guidedLoop, heedfulAgent)
			var refused protocol.Status
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(tt.signal, tt.give)
			}, time.Hour)
			env.RegisterDelayedCallback(func() {
				refused = status(t, env)
				env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana"})
			}, 2*time.Hour)
			env.ExecuteWorkflow(guidedLoop, 4, false)
			require.True(t, env.IsWorkflowCompleted())
			require.NotNil(t, refused.LastRejected)
			assert.Contains(t, refused.LastRejected.Reason, tt.want)
			assert.Equal(t, protocol.StateHalted, refused.State, "still paused")
			assert.Nil(t, status(t, env).Guidance)
		})
	}
}

// childAgent is a child workflow that reads the notice it was started with.
func childAgent(ctx workflow.Context, turn int) (string, error) {
	if n, ok := interceptor.WorkflowNotice(ctx); ok && n.Guidance != "" {
		return fmt.Sprintf("turn %d, following %q", turn, n.Guidance), nil
	}
	return "the same plan", nil
}

// childLoop starts childAgent n times.
func childLoop(ctx workflow.Context, n int) ([]string, error) {
	var out []string
	for i := range n {
		var s string
		if err := workflow.ExecuteChildWorkflow(ctx, childAgent, i).Get(ctx, &s); err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// TestGuidanceReachesAChildWorkflow: a child workflow reads the notice it
// was started with through WorkflowNotice.
func TestGuidanceReachesAChildWorkflow(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	env.RegisterWorkflow(childLoop)
	env.RegisterWorkflow(childAgent)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana", Guidance: "plan the migration per tenant"})
	}, time.Hour)
	env.ExecuteWorkflow(childLoop, 5)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []string{"the same plan", "the same plan", "the same plan",
		`turn 3, following "plan the migration per tenant"`, `turn 4, following "plan the migration per tenant"`}, out)
}

// seen is what repeater saw of its notice.
type seen struct {
	Noticed bool `json:"noticed"`
	Repeats int  `json:"repeats"`
}

// repeater reports the notice it was called with.
func repeater(ctx context.Context, query string) (seen, error) {
	n, ok := interceptor.NoticeFrom(ctx)
	return seen{Noticed: ok, Repeats: n.Repeats}, nil
}

// repeatLoop calls repeater once per query, as an activity or a local
// activity.
func repeatLoop(ctx workflow.Context, queries []string, local bool) ([]seen, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	var out []seen
	for _, q := range queries {
		var s seen
		var f workflow.Future
		if local {
			f = workflow.ExecuteLocalActivity(ctx, "Repeater", q)
		} else {
			f = workflow.ExecuteActivity(ctx, "Repeater", q)
		}
		if err := f.Get(ctx, &s); err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// TestNoticeRepeats: with CountRepeats a call is told how many calls of
// the run before it had the same node and arguments; a first call has
// nothing to be told and carries no header. Without it no call carries
// one. The node is exempt, so that no detector trips on the repeats.
func TestNoticeRepeats(t *testing.T) {
	queries := []string{"weather in Oslo", "weather in Oslo", "weather in Oslo", "weather in Bergen"}
	tests := []struct {
		name  string
		count bool
		local bool
		want  []seen
	}{
		{"counted", true, false, []seen{{false, 0}, {true, 1}, {true, 2}, {false, 0}}},
		{"counted, local activity", true, true, []seen{{false, 0}, {true, 1}, {true, 2}, {false, 0}}},
		{"off by default", false, false, []seen{{}, {}, {}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, interceptor.Options{CountRepeats: tt.count, Nodes: map[string]interceptor.NodeOptions{"Repeater": {Exempt: true}}})
			env.RegisterWorkflow(repeatLoop)
			env.RegisterActivityWithOptions(repeater, activity.RegisterOptions{Name: "Repeater"})
			env.ExecuteWorkflow(repeatLoop, queries, tt.local)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var got []seen
			require.NoError(t, env.GetWorkflowResult(&got))
			assert.Equal(t, tt.want, got)
		})
	}
}

// currentDetails reads the workflow's current details, as the Web UI does.
func currentDetails(t *testing.T, env *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	v, err := env.QueryWorkflow("__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}

// TestCurrentDetailsShowTheLadder: the UI's current details list the
// warning a halted loop ignored, and after a resume with guidance say what
// the loop's calls are told.
func TestCurrentDetailsShowTheLadder(t *testing.T) {
	env := newAgentEnv(t, interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall}, guidedLoop, heedfulAgent)
	var atHalt string
	env.RegisterDelayedCallback(func() {
		atHalt = currentDetails(t, env)
		env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana", Guidance: "read config/prod.yaml"})
	}, time.Hour)
	env.ExecuteWorkflow(guidedLoop, 9, false)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.Contains(t, atHalt, "loopguard: halted — stalled")
	assert.Contains(t, atHalt, "- ignored warning 1/1 at `HeedfulAgent`: ")
	after := currentDetails(t, env)
	assert.Contains(t, after, "loopguard: running — resumed with guidance** (halt 1, by ana)")
	assert.Contains(t, after, "> read config/prod.yaml")
	assert.Contains(t, after, "The calls of `HeedfulAgent` carry it")
}
