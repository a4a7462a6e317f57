package watch

import (
	"context"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// nopService answers the watcher's requests without a server.
type nopService struct {
	workflowservice.WorkflowServiceClient
	pauses int
}

func (s *nopService) PauseWorkflowExecution(context.Context, *workflowservice.PauseWorkflowExecutionRequest, ...grpc.CallOption) (*workflowservice.PauseWorkflowExecutionResponse, error) {
	s.pauses++
	return &workflowservice.PauseWorkflowExecutionResponse{}, nil
}

// DescribeWorkflowExecution describes a run with no workflow task
// waiting to start.
func (s *nopService) DescribeWorkflowExecution(context.Context, *workflowservice.DescribeWorkflowExecutionRequest, ...grpc.CallOption) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return &workflowservice.DescribeWorkflowExecutionResponse{}, nil
}

// tasks splits a history into the pages a follower gets: each ends with
// a workflow task's completion.
func tasks(b testing.TB, path string) ([][]*historypb.HistoryEvent, int) {
	h, err := history.ReadHistoryFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var out [][]*historypb.HistoryEvent
	start, calls := 0, 0
	for i, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			calls++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			out = append(out, h.GetEvents()[start:i+1])
			start = i + 1
		}
	}
	return append(out, h.GetEvents()[start:]), calls
}

// The policy's OnHalt decides whether a halt pauses: pause (the
// default) and fail do, observe only observes. A 1000-call history
// recorded without the guard, followed page by page with no server.
func TestWatchOnHalt(t *testing.T) {
	pages, _ := tasks(t, "../../testsuite/testdata/histories/workload-1000-unguarded.json")
	for _, tc := range []struct {
		onHalt protocol.OnHalt
		pause  bool
	}{{"", true}, {protocol.OnHaltFail, true}, {protocol.OnHaltObserve, false}} {
		svc := &nopService{}
		w, err := New(Options{Service: svc, Guard: interceptor.Options{OnHalt: tc.onHalt}})
		if err != nil {
			t.Fatal(err)
		}
		halts := len(followPages(t, w, pages).snapshot().halts())
		if halts == 0 || (svc.pauses > 0) != tc.pause {
			t.Errorf("OnHalt %q: %d halts, %d pauses asked", tc.onHalt, halts, svc.pauses)
		}
	}
}

// followPages follows one run of w, "w"/"r", through pages as the long
// poll hands them, with no server.
func followPages(t testing.TB, w *Watcher, pages [][]*historypb.HistoryEvent) *reader {
	r, _ := following(t, w, pages)
	return r
}

// following is followPages with the follower that acted: what the
// watcher holds for the run.
func following(t testing.TB, w *Watcher, pages [][]*historypb.HistoryEvent) (*reader, *follower) {
	r, err := newReader(w.opts.Guard, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{w: w, workflowID: "w", runID: "r"}
	for _, p := range pages {
		r.add(p...)
		f.act(context.Background(), zap.NewNop(), r.snapshot())
	}
	return r, f
}
