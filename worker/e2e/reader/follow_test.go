package reader_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/internal/traces"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// realTraces is the development corpus of real agent traces.
const realTraces = "../../../interceptor/detect/testdata/real"

var followEvery = flag.Int("follow.every", 30, "TestReaderFollowsLiveHistories runs every Nth trace of the corpus (1: all)")

// follow reads execution id's history with a Reader while it grows, page
// by page as the long poll brings them, until its run closes.
func follow(ctx context.Context, c client.Client, id string, opts history.Options) (history.Execution, int, error) {
	r, err := history.NewReader(opts)
	if err != nil {
		return history.Execution{}, 0, err
	}
	polls := 0
	for {
		polls++
		it := c.GetWorkflowHistory(ctx, id, "", true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			var notFound *serviceerror.NotFound
			if errors.As(err, &notFound) {
				break // not started yet
			}
			if err != nil {
				return history.Execution{}, polls, err
			}
			if e.GetEventId() <= r.Cursor() {
				continue
			}
			if err := r.Add(e); err != nil {
				return history.Execution{}, polls, err
			}
		}
		if ex := r.Execution(); ex.Closed {
			return r.Close(), polls, nil
		}
		select {
		case <-ctx.Done():
			return history.Execution{}, polls, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestReaderFollowsLiveHistories: real agent traces run on the embedded
// server without the guard (calls one at a time, user messages as
// signals, so some workflow tasks wait on a signal), each followed live by
// a Reader as its history grows. The Reader's analysis of each run, under
// the defaults and with warnings, is the analysis of its exported history
// afterwards, field for field.
func TestReaderFollowsLiveHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	all, err := traces.Load(realTraces)
	if err != nil {
		t.Fatal(err)
	}
	var sample []traces.Trace
	for i := 0; i < len(all); i += max(*followEvery, 1) {
		sample = append(sample, all[i])
	}
	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true})
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(sample))*20*time.Second+time.Minute)
	defer cancel()
	w := worker.New(c, "traces", worker.Options{})
	traces.Register(w, traces.Nodes(sample))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	optionSets := []history.Options{{}, {Guard: interceptor.Options{Warnings: 1}}}
	calls, verdicts, polls := 0, 0, 0
	for i, tr := range sample {
		id := fmt.Sprintf("trace-%d", i)
		type followed struct {
			ex    history.Execution
			polls int
			err   error
		}
		live := make([]chan followed, len(optionSets))
		for k, opts := range optionSets {
			live[k] = make(chan followed, 1)
			go func() {
				ex, n, err := follow(ctx, c, id, opts)
				live[k] <- followed{ex, n, err}
			}()
		}
		runID, err := traces.Run(ctx, c, "traces", id, tr)
		if err != nil {
			t.Fatalf("trace %s: %v", tr.Name, err)
		}
		exported, err := history.ExportHistory(ctx, c, id, runID)
		if err != nil {
			t.Fatal(err)
		}
		for k, opts := range optionSets {
			got := <-live[k]
			if got.err != nil {
				t.Fatalf("trace %s: following: %v", tr.Name, got.err)
			}
			a, err := history.NewAnalyzer(opts)
			if err != nil {
				t.Fatal(err)
			}
			want := a.History(exported, "")
			if !reflect.DeepEqual(got.ex, want) {
				t.Fatalf("trace %s, options %d: followed live %d calls, %d verdicts; afterwards %d calls, %d verdicts:\n got %+v\nwant %+v",
					tr.Name, k, len(got.ex.Calls), len(got.ex.Verdicts), len(want.Calls), len(want.Verdicts), got.ex, want)
			}
			calls += len(want.Calls)
			verdicts += len(want.Verdicts)
			polls += got.polls
		}
	}
	t.Logf("%d traces followed live under %d options: %d calls, %d verdicts, %d long polls", len(sample), len(optionSets), calls, verdicts, polls)
}
