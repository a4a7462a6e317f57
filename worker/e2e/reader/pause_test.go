// Package reader_test checks package history's Reader on histories of
// the embedded server as they grow: the events the server writes, paged
// as a long poll brings them, with Temporal's Workflow Pause on.
package reader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// Think is the agent's one tool: it gives the same answer every time.
func Think(ctx context.Context, question string) (string, error) {
	time.Sleep(100 * time.Millisecond) // a model call, short
	return "the same answer", nil
}

// Agent asks Think until it has asked 60 times: a loop no interceptor
// guards, as an agent of any SDK would be.
func Agent(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	for range 60 {
		var answer string
		if err := workflow.ExecuteActivity(ctx, Think, "what next?").Get(ctx, &answer); err != nil {
			return err
		}
	}
	return nil
}

// TestReaderFollowsWorkflowPause: a Reader follows an unguarded agent's
// history on the embedded server (Workflow Pause on) page by page with a
// long poll, as a watcher does (the server ends the long poll of a paused
// execution: the history is read again). At its first halt the execution is paused
// with the halt's request id, twice (the server takes the repeat as done:
// one Paused event); the Reader reads the pause as the answer to that
// halt, counting the calls already scheduled while it landed; the unpause
// resumes the loop, which halts again; a termination ends the run. The
// analysis of the exported history afterwards reaches the same halts,
// pause and verdicts.
func TestReaderFollowsWorkflowPause(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true,
		DynamicConfig: map[string]any{"frontend.WorkflowPauseEnabled": true}})
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	w := worker.New(c, "agents", worker.Options{})
	w.RegisterWorkflow(Agent)
	w.RegisterActivity(Think)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "agent-1", TaskQueue: "agents"}, Agent)
	if err != nil {
		t.Fatal(err)
	}
	r, err := history.NewReader(history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := c.WorkflowService()
	pause := func(ev int, seq int, reason string) {
		for range 2 { // a restarted watcher asks again: the same request id is taken as done
			_, err := svc.PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
				Namespace: "default", WorkflowId: run.GetID(), RunId: run.GetRunID(),
				Identity: history.PauseIdentity, Reason: reason, RequestId: history.PauseRequestID(run.GetID(), run.GetRunID(), seq),
			})
			if err != nil {
				t.Fatalf("pause for halt %d (seen at event %d): %v", seq, ev, err)
			}
		}
	}

	var all []*historypb.HistoryEvent
	phase, pausedFor, halts, lagCalls, rereads := "loop", 0, 0, 0, 0
	// The server ends a long poll of a paused execution's history as it
	// ends one of a closed execution's (it waits only while the status is
	// Running): while paused, the history is read again from the start,
	// a little later, and the events already read are skipped.
	for closed := false; !closed; {
		it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e.GetEventId() <= r.Cursor() {
				continue // read before the long poll ended
			}
			all = append(all, e)
			if err := r.Add(e); err != nil {
				t.Fatal(err)
			}
			ex := r.Execution()
			closed = ex.Closed
			switch {
			case phase == "loop" && ex.Pending() != nil:
				p := ex.Pending()
				pause(int(ex.LastEvent), p.Seq, history.PauseReason(*p))
				phase, pausedFor, halts = "pausing", p.Seq, len(ex.Calls)
			case phase == "pausing" && ex.Paused() != nil:
				p := ex.Paused()
				if p.HaltSeq != pausedFor || !p.ByWatcher() {
					t.Fatalf("the pause %+v: want the answer to halt %d, the watcher's", p, pausedFor)
				}
				lagCalls = len(ex.Calls) - halts
				if _, err := svc.UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
					Namespace: "default", WorkflowId: run.GetID(), RunId: run.GetRunID(), Identity: "ops", Reason: "looked at it",
					RequestId: "unpause-1",
				}); err != nil {
					t.Fatal(err)
				}
				phase = "resumed"
			case phase == "resumed" && ex.Paused() == nil && ex.Pending() != nil && ex.Pending().Seq > pausedFor:
				if err := c.TerminateWorkflow(ctx, run.GetID(), run.GetRunID(), "halted twice"); err != nil {
					t.Fatal(err)
				}
				phase = "terminating"
			}
		}
		if !closed {
			rereads++
			time.Sleep(50 * time.Millisecond)
		}
	}
	ex := r.Close()
	if phase != "terminating" || !ex.Closed || ex.Pauses.Len() != 1 {
		t.Fatalf("ended in phase %q, closed %v, pauses %+v", phase, ex.Closed, ex.Pauses)
	}
	p := ex.Pauses.At(0)
	if !p.Unpaused || p.UnpausedBy != "ops" || p.HaltSeq != pausedFor {
		t.Fatalf("pause %+v: want halt %d answered, unpaused by ops", p, pausedFor)
	}
	t.Logf("halt %d at call %d; pause in the history %d calls later (superseded %v); %d halts in all, %d calls; history read again %d times while paused",
		pausedFor, halts, lagCalls, p.Superseded, len(ex.Halts()), len(ex.Calls), rereads)

	// The analysis afterwards of the same history, exported whole.
	exported, err := history.ExportHistory(ctx, c, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	if len(exported.GetEvents()) != len(all) {
		t.Fatalf("exported %d events, followed %d", len(exported.GetEvents()), len(all))
	}
	a, err := history.NewAnalyzer(history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	after := a.History(exported, "")
	if got, want := verdictKeys(after), verdictKeys(ex); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the analysis afterwards: %v\nthe Reader live: %v", got, want)
	}
	if fmt.Sprint(after.Pauses) != fmt.Sprint(ex.Pauses) {
		t.Fatalf("the analysis afterwards reads the pauses %+v, the Reader live %+v", after.Pauses, ex.Pauses)
	}
}

// verdictKeys are the calls, detectors and nodes of ex's halts.
func verdictKeys(ex history.Execution) []string {
	var out []string
	for _, v := range ex.Verdicts {
		if v.Halt != nil {
			out = append(out, fmt.Sprintf("%d %s %s", v.Call, v.Halt.Detector, v.Halt.Node))
		}
	}
	return out
}
