package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

const timersQueue = "timers"

// retryBackoff is how a backed-off retry loop waits between attempts,
// through one of the SDK's timer APIs.
type retryBackoff struct {
	API     string
	Backoff time.Duration
}

// backOff waits b.Backoff through b.API, one of the fixtures' timer APIs,
// or "await-true": AwaitWithTimeout on a condition that already holds,
// for which SDK 1.50 still starts its timer, unless its flag
// SDKFlagCancelAwaitTimerOnCondition is on.
func backOff(ctx workflow.Context, b retryBackoff) error {
	if b.API == "await-true" {
		_, err := workflow.AwaitWithTimeout(ctx, b.Backoff, func() bool { return true })
		return err
	}
	return fixtures.WaitTimer(ctx, b.API, b.Backoff)
}

// retryLoop calls a tool that always fails the same way, backing off
// between attempts, until the guard escalates (OnHalt fail): it returns the
// call the guard stopped, or 0 when none was stopped in 40 calls.
func retryLoop(ctx workflow.Context, b retryBackoff) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	for call := 1; call <= 40; call++ {
		err := workflow.ExecuteActivity(ctx, "FetchQuote", "ACME").Get(ctx, nil)
		if interceptor.IsEscalated(err) {
			return call, nil
		}
		if err := backOff(ctx, b); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// TestTimersLiveAsInHistory: a backed-off retry loop is stopped by the
// live guard at the call, by the detector, after the warnings the analysis
// of its history finds, whichever timer API backs it off and whether the
// backoff is zero (no timer in the history) or not. Before guard version
// 13 the guard noted a timer for a zero backoff, and none for
// NewTimerWithOptions and AwaitWithOptions, while the analysis counts the
// history's TimerStarted events.
func TestTimersLiveAsInHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx := testContext(t, 3*time.Minute)
	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true})
	c := devtest.NewClient(t, srv)
	opts := interceptor.Options{OnHalt: protocol.OnHaltFail}
	testsuite.StartWorker(t, c, timersQueue, testsuite.WorkerOptions{
		Guard: &opts,
		Register: func(r sdkworker.Registry) {
			r.RegisterWorkflowWithOptions(retryLoop, workflow.RegisterOptions{Name: "RetryLoop"})
			r.RegisterActivityWithOptions(func(context.Context, string) (string, error) {
				return "", errors.New("quote service: 429 too many requests")
			}, activity.RegisterOptions{Name: "FetchQuote"})
		},
	})

	var cases []retryBackoff
	for _, api := range []string{fixtures.TimerSleep, fixtures.TimerNew, fixtures.TimerWithOptions, fixtures.TimerAwait, fixtures.TimerAwaitOptions, "await-true"} {
		for _, d := range []time.Duration{0, 10 * time.Millisecond} {
			cases = append(cases, retryBackoff{API: api, Backoff: d})
		}
	}
	for _, b := range cases {
		t.Run(fmt.Sprintf("%s %s", b.API, b.Backoff), func(t *testing.T) {
			t.Parallel() // the server fires timers about a second late: wait for them together
			id := fmt.Sprintf("retry-%s-%s", b.API, b.Backoff)
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: timersQueue}, "RetryLoop", b)
			if err != nil {
				t.Fatal(err)
			}
			var stopped int
			if err := run.Get(ctx, &stopped); err != nil {
				t.Fatal(err)
			}
			st, err := testsuite.QueryStatus(ctx, c, id, run.GetRunID())
			if err != nil {
				t.Fatal(err)
			}
			h, err := testsuite.ExportHistory(ctx, c, id, run.GetRunID())
			if err != nil {
				t.Fatal(err)
			}
			a, err := history.NewAnalyzer(history.Options{Guard: opts, AsRecorded: true})
			if err != nil {
				t.Fatal(err)
			}
			ex := a.History(h, "")
			i := slices.IndexFunc(ex.Verdicts, func(v interceptor.Verdict) bool { return v.Halt != nil })
			if stopped == 0 || st.Halt == nil || i < 0 {
				t.Fatalf("live stopped call %d (halt %v), analysis verdicts %+v (guarded %v %s, err %v, problems %q): want a halt both ways",
					stopped, st.Halt != nil, ex.Verdicts, ex.Guarded, ex.NotGuarded, ex.Err, ex.Problems)
			}
			v := ex.Verdicts[i]
			live := fmt.Sprintf("call %d by %s at %s after %d warnings", stopped, st.Halt.Detector, st.Halt.Node, st.Warnings)
			judged := fmt.Sprintf("call %d by %s at %s after %d warnings", v.Call, v.Halt.Detector, v.Halt.Node, i)
			if live != judged {
				t.Errorf("live: %s; analysis: %s", live, judged)
			}
			t.Logf("%s; %d timers in the history", live, countTimers(h.GetEvents()))
		})
	}
}

func countTimers(events []*historypb.HistoryEvent) int {
	n := 0
	for _, e := range events {
		if e.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED {
			n++
		}
	}
	return n
}
