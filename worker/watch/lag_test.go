//go:build unix

package watch

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/workflows"
)

// TestWatchLag measures the lag from the call that trips to the pause
// taking effect, over LOOPGUARD_WATCH_LAG looping agents (100 when set
// to 1) followed by one watcher:
//
//	LOOPGUARD_WATCH_LAG=1 go test ./worker/watch -run TestWatchLag -v -timeout 20m
//	LOOPGUARD_WATCH_LAG=1000 go test ./worker/watch -run TestWatchLag -v -timeout 60m
//
// It reports the median and p99 of (the Paused event's time - the
// tripping call's event time) for each execution's first halt, and the
// calls scheduled between them. LOOPGUARD_WATCH_TOOL (a duration) makes
// every tool call take that long; LOOPGUARD_WATCH_TURNS ends each loop
// after that many model turns (the loop trips at its sixth), so that a
// loop may close before its pause lands: it must then be listed as
// escaped.
func TestWatchLag(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LOOPGUARD_WATCH_LAG"))
	switch {
	case n <= 0:
		t.Skip("set LOOPGUARD_WATCH_LAG=1 (100 executions) or to a number of executions")
	case n == 1:
		n = 100
	}
	turns := 10000
	if v, err := strconv.Atoi(os.Getenv("LOOPGUARD_WATCH_TURNS")); err == nil && v > 0 {
		turns = v
	}
	ctx := testContext(t, 30*time.Minute+time.Duration(n)*time.Second)
	ts := startServer(t, true)
	status, sample := ts.lagWatcher(t)
	s0 := sample()
	cpu0 := cpuTime(t)
	start := time.Now()
	// Started 16 at a time: a thousand starts at once time out on the
	// loaded machine.
	runs := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			run, err := ts.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("lag-%d", i), TaskQueue: plainQueue},
				workflows.ParallelToolAgent, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 4, MaxTurns: turns})
			if err != nil {
				t.Errorf("start lag-%d: %v", i, err)
				return
			}
			runs[i] = run.GetRunID()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	said := time.Now()
	eventually(t, ctx, "every agent paused or closed", func() bool {
		l, err := ts.c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: "default", Query: `ExecutionStatus="Paused" OR ExecutionStatus="Completed"`})
		if time.Since(said) > 30*time.Second {
			said = time.Now()
			t.Logf("%s: %d of %d paused or closed", time.Since(start).Round(time.Second), l.GetCount(), n)
		}
		return err == nil && int(l.GetCount()) == n
	})
	if turns < 10000 {
		// A loop that closed before its pause landed is listed a little
		// after its close event is read.
		time.Sleep(3 * time.Second)
	}
	took, cpu := time.Since(start), cpuTime(t)-cpu0
	var lags []time.Duration
	var calls []int
	s1 := sample()
	st := status()
	byRun := map[string][]HaltStatus{}
	for _, e := range st.Executions {
		byRun[e.RunID] = e.Halts
	}
	agree, unstarted, escaped, listed, held := 0, 0, 0, 0, 0
	for i, run := range runs {
		// A loop that escaped may have closed in the current run: a mend
		// resets a run whose task a pause failed before it started.
		current := ts.describe(t, ctx, fmt.Sprintf("lag-%d", i), "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
		if events := ts.history(t, ctx, fmt.Sprintf("lag-%d", i), current); events[len(events)-1].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
			run = current
		}
		events := ts.history(t, ctx, fmt.Sprintf("lag-%d", i), run)
		if closed := events[len(events)-1].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED; closed {
			// Every halt is findable: a loop that closed before its
			// pause landed is listed, its last halt escaped.
			s := analyse(t, events)
			hs := byRun[run]
			if len(s.halts()) > 0 && !s.halts()[len(s.halts())-1].Answered {
				escaped++
				if len(hs) == len(s.halts()) && hs[len(hs)-1].Action == ActionEscaped {
					listed++
				} else {
					t.Errorf("lag-%d closed before its pause landed: listed %+v", i, hs)
				}
			}
			if len(s.halts()) == 0 || !s.halts()[0].Answered {
				continue
			}
		}
		for _, e := range events {
			if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED {
				unstarted++
			}
		}
		s := analyse(t, events)
		if sameHalts(byRun[run], s.halts()) {
			agree++
		} else {
			t.Errorf("lag-%d: the watcher's halts %+v, the analysis afterwards %+v", i, byRun[run], s.halts())
		}
		if len(s.halts()) == 0 || !s.halts()[0].Answered {
			t.Errorf("lag-%d: halts %+v", i, s.halts())
			continue
		}
		h := s.halts()[0]
		if trip := tripping(events, s, h.Verdict.Call); trip != nil && heldCalls(t, ctx, ts, fmt.Sprintf("lag-%d", i), run, events, trip) {
			held++
		}
		lags = append(lags, h.PausedAt.Sub(h.Time))
		calls = append(calls, h.CallsBefore)
	}
	slices.Sort(lags)
	slices.Sort(calls)
	q := func(p float64) int { return min(len(lags)-1, int(p*float64(len(lags)))) }
	t.Logf("the watcher's halts agree with the analysis afterwards in %d of %d executions", agree, n)
	t.Logf("loops that closed before their pause landed: %d, listed as escaped: %d (status: %d escaped); tools of %s, loops of %d turns",
		escaped, listed, st.Escaped, os.Getenv("LOOPGUARD_WATCH_TOOL"), turns)
	t.Logf("workflow tasks a pause failed before they started: %d in %d executions (%d pauses)", unstarted, n, st.Pauses)
	t.Logf("pauses ahead of their halt: %d (%d undone); tripping calls held, scheduled and not dispatched while paused: %d of %d", st.Ahead, st.Undone, held, len(lags))
	t.Logf("process CPU (server, worker and watcher) %s over %s of wall time", cpu.Round(time.Millisecond), took.Round(time.Millisecond))
	if s0 != nil {
		ts.reportWatcher(t, ctx, n, took, s0, s1, sample, runs)
	}
	t.Logf("%d executions paused in %s (%d pauses by this watcher); lag from the tripping call to the pause: median %s, p99 %s, max %s; calls scheduled in the lag: median %d, p99 %d, max %d",
		n, took.Round(time.Millisecond), st.Pauses, lags[q(0.5)].Round(time.Millisecond), lags[q(0.99)].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond),
		calls[q(0.5)], calls[q(0.99)], calls[len(calls)-1])
}
