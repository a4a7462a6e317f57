package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

// TestChatAgentOnServer: workflows.ChatAgent, whose conversation lives in
// the workflow, on the real server: warned, it heeds the warning it reads
// with interceptor.NoticeFor and completes unhalted; a model that ignores
// warnings halts, a human resumes it by signal with guidance, and the
// workflow puts the guidance in its prompt and completes. Both histories
// replay with the guard.
func TestChatAgentOnServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := workflows.ChatGuardOptions()
	g, err := interceptor.New(opts)
	require.NoError(t, err)
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	r := &realServer{t: t, srv: srv, client: srv.GetDefaultClient(), queue: "chat"}
	srv.NewWorkerWithOptions(r.queue, workflows.Register, worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})

	run := r.start(ctx, "chat-heeds", workflows.ChatAgent, workflows.ChatInput{Task: "make the cache tests pass"})
	var heeded workflows.ChatResult
	require.NoError(t, run.Get(ctx, &heeded))
	assert.Equal(t, workflows.OutcomeCompleted, heeded.Outcome, "%+v", heeded)
	require.Len(t, heeded.Told, 1)
	assert.Contains(t, heeded.Told[0], "warning: ")
	st := r.waitStatus(ctx, "chat-heeds", func(protocol.Status) bool { return true })
	assert.Zero(t, st.Halts, "never halted")

	run = r.start(ctx, "chat-guided", workflows.ChatAgent, workflows.ChatInput{Task: "make the cache tests pass", Stubborn: true})
	r.waitStatus(ctx, "chat-guided", func(s protocol.Status) bool { return s.State == protocol.StateHalted })
	require.NoError(t, r.client.SignalWorkflow(ctx, "chat-guided", "", protocol.DefaultResumeSignal,
		protocol.ResumeRequest{By: "e2e", Guidance: workflows.ChatGuidance}))
	var guided workflows.ChatResult
	require.NoError(t, run.Get(ctx, &guided))
	assert.Equal(t, workflows.OutcomeCompleted, guided.Outcome, "%+v", guided)
	require.Len(t, guided.Told, 2)
	assert.Contains(t, guided.Told[1], "guidance: "+workflows.ChatGuidance)

	for _, id := range []string{"chat-heeds", "chat-guided"} {
		h := r.history(ctx, id)
		assert.NoError(t, testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: opts, Register: func(w worker.WorkflowRegistry) {
			w.RegisterWorkflow(workflows.ChatAgent)
		}}), id)
	}
}
