package e2e_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// remoteAgentLoop calls the "Agent" activity on another task queue (another
// worker) n times with the same input, until its answer says it is done.
func remoteAgentLoop(ctx workflow.Context, queue string, n int) ([]string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: queue, StartToCloseTimeout: time.Minute})
	var out []string
	for range n {
		var s string
		err := workflow.ExecuteActivity(ctx, "Agent", "fix the build").Get(ctx, &s)
		if interceptor.IsEscalated(err) {
			return append(out, "escalated"), nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// remoteAgent ignores warnings and follows guidance, and records every
// notice it could read.
type remoteAgent struct {
	mu      sync.Mutex
	notices []protocol.Notice
}

func (a *remoteAgent) Run(ctx context.Context, task string) (string, error) {
	n, ok := interceptor.NoticeFrom(ctx)
	if ok {
		a.mu.Lock()
		a.notices = append(a.notices, n)
		a.mu.Unlock()
	}
	if n.Guidance != "" {
		return fmt.Sprintf("%s: %s (activity %s)", task, n.Guidance, activity.GetInfo(ctx).ActivityID), nil
	}
	return task + ": the same patch", nil
}

func (a *remoteAgent) seen() (warned, guided bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range a.notices {
		warned = warned || n.Warning != nil
		guided = guided || n.Guidance != ""
	}
	return warned, guided
}

// TestNoticeAcrossWorkers: the notice reaches an activity that runs on
// another worker, on another task queue, when that worker registers the
// guard (with any Options: zero here); the header is in the history either
// way, and a worker without the guard runs the activity blind to it. On
// the real server: a warning, a halt, and a resume update with guidance.
func TestNoticeAcrossWorkers(t *testing.T) {
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const guidance = "read the linker error first"
	for _, guarded := range []bool{true, false} {
		t.Run(map[bool]string{true: "activity worker with the guard", false: "activity worker without"}[guarded], func(t *testing.T) {
			queue := queueFor(t)
			testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{
				Guard: guardPtr(interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall}),
				Register: func(r worker.Registry) {
					r.RegisterWorkflowWithOptions(remoteAgentLoop, workflow.RegisterOptions{Name: "RemoteAgentLoop"})
				},
			})
			agent := &remoteAgent{}
			var activityGuard *interceptor.Options
			if guarded {
				activityGuard = &interceptor.Options{}
			}
			testsuite.StartWorker(t, c, queue+"-agents", testsuite.WorkerOptions{
				Guard: activityGuard,
				Register: func(r worker.Registry) {
					r.RegisterActivityWithOptions(agent.Run, activity.RegisterOptions{Name: "Agent"})
				},
			})

			id := queue
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, "RemoteAgentLoop", queue+"-agents", 9)
			require.NoError(t, err)
			s, err := testsuite.WaitStatus(ctx, c, id, testsuite.Halted(1))
			require.NoError(t, err)
			require.Len(t, s.Halt.Warnings, 1, "warned once, then halted")

			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: id, UpdateName: protocol.DefaultResumeUpdate, WaitForStage: client.WorkflowUpdateStageCompleted,
				Args: []any{protocol.ResumeRequest{By: "ana", Guidance: guidance}},
			})
			require.NoError(t, err)
			var d protocol.Decision
			require.NoError(t, h.Get(ctx, &d))
			assert.Equal(t, guidance, d.Guidance)

			var out []string
			require.NoError(t, run.Get(ctx, &out))
			warned, guided := agent.seen()
			headers := noticeHeaders(t, ctx, c, id)
			assert.Positive(t, headers, "the history's scheduled activities carry the notice header")
			if guarded {
				assert.True(t, warned, "the remote agent read the warning")
				assert.True(t, guided, "and the guidance")
				assert.Contains(t, out[len(out)-1], guidance, "and followed it")
				return
			}
			assert.False(t, warned || guided, "without the guard the worker cannot read the notice")
			assert.NotContains(t, out[len(out)-1], guidance)
		})
	}
}

// noticeHeaders counts the scheduled activities of id's history whose
// header carries a notice.
func noticeHeaders(t *testing.T, ctx context.Context, c client.Client, id string) int {
	t.Helper()
	n := 0
	iter := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			if f := a.GetHeader().GetFields(); f != nil && hasNotice(f) {
				n++
			}
		}
	}
	return n
}

func hasNotice(f map[string]*commonpb.Payload) bool { return f[protocol.NoticeHeader] != nil }
