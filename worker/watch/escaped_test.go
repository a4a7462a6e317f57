package watch

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/workflows"
)

// Every halt is findable: short loops that trip at their last calls
// (tools of 0 ms) close before their pause lands, and stay listed with
// their halt as escaped, counted once, with no "trying again" for a
// closed run; a loop that goes on is paused, not escaped. Without the
// escaped listing the closed runs vanish from Status.
func TestEscapedHaltsListed(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	logger, logs := observed()
	// Pauses land a second late: a short loop always closes first.
	slow := slowPause{WorkflowServiceClient: ts.c.WorkflowService(), delay: time.Second}
	w, _ := ts.watcher(t, Options{Logger: logger, Service: slow})
	const short = 3
	var ids []string
	for i := range short {
		id := fmt.Sprintf("short-%d", i)
		ids = append(ids, id)
		// The stuck agent trips near call 26 (turn 6, a model call and
		// 4 tools a turn): 6 turns end it right after the trip.
		if _, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: plainQueue},
			workflows.ParallelToolAgent, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 4, MaxTurns: 6}); err != nil {
			t.Fatal(err)
		}
	}
	ts.agent(t, ctx, "long", plainQueue, activities.ParallelStuck)
	listed := func() map[string]ExecutionStatus {
		out := map[string]ExecutionStatus{}
		for _, e := range w.Status().Executions {
			out[e.WorkflowID] = e
		}
		return out
	}
	eventually(t, ctx, "every run listed with its halt", func() bool {
		l := listed()
		for _, id := range append(ids, "long") {
			if len(l[id].Halts) == 0 || (id != "long" && !l[id].Closed) {
				return false
			}
		}
		return l["long"].Paused
	})
	l, escaped := listed(), 0
	for _, id := range ids {
		e := l[id]
		after := analyse(t, ts.history(t, ctx, id, e.RunID))
		if !sameHalts(e.Halts, after.halts()) {
			t.Errorf("%s: listed halts %+v, the analysis %+v", id, e.Halts, after.halts())
		}
		last := e.Halts[len(e.Halts)-1]
		switch {
		case last.Answered && last.Action == ActionEscaped:
			t.Errorf("%s: halt %d answered by a pause and escaped", id, last.Seq)
		case !last.Answered && last.Action != ActionEscaped:
			t.Errorf("%s: halt %d unanswered in a closed run, action %q, want %q", id, last.Seq, last.Action, ActionEscaped)
		case !last.Answered:
			escaped++
		}
	}
	for _, h := range l["long"].Halts {
		if h.Action == ActionEscaped || !h.Answered {
			t.Errorf("the paused loop's halt %d: action %q, answered %v; want answered, not escaped", h.Seq, h.Action, h.Answered)
		}
	}
	if st := w.Status(); st.Escaped != escaped {
		t.Errorf("Status.Escaped %d, the closed runs' unanswered halts %d", st.Escaped, escaped)
	}
	if escaped != short {
		t.Errorf("%d of %d short loops escaped, want all (their pause lands a second late)", escaped, short)
	}
	if n := logs.FilterMessage("watch: pause failed; trying again at the next event").Len(); n > 0 {
		t.Errorf("%d \"trying again\" lines for closed runs", n)
	}
}

// slowPause delays each Workflow Pause by delay, as a watcher far from
// the server or behind a loaded one would, and counts them in calls if
// set.
type slowPause struct {
	workflowservice.WorkflowServiceClient
	delay time.Duration
	calls *atomic.Int32
}

func (s slowPause) PauseWorkflowExecution(ctx context.Context, req *workflowservice.PauseWorkflowExecutionRequest,
	opts ...grpc.CallOption,
) (*workflowservice.PauseWorkflowExecutionResponse, error) {
	if s.calls != nil {
		s.calls.Add(1)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(s.delay):
	}
	return s.WorkflowServiceClient.PauseWorkflowExecution(ctx, req, opts...)
}
