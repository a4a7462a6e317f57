package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/worker/watch"
	"github.com/loopguard/loopguard/workflows"
)

func TestWatchFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  string // a usage error's text, "" for none
	}{
		{args: nil},
		{args: []string{"--shard", "1/3", "--on-pause-refused", "cancel", "--policy", "tool_call"}},
		{args: []string{"--shard", "3/3"}, bad: "--shard"},
		{args: []string{"--shard", "x"}, bad: "--shard"},
		{args: []string{"--on-pause-refused", "retry"}, bad: "signal, cancel, observe"},
		{args: []string{"--poll-interval", "0s"}, bad: "--poll-interval"},
		{args: []string{"--max-followed", "-1"}, bad: "--max-followed"},
		{args: []string{"stray"}, bad: "no arguments"},
		{args: []string{"--policy", "/nonexistent.json"}, bad: "--policy"},
	} {
		_, o, err := watchOptions(tc.args)
		var ue *usageError
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.bad != "" && (!errors.As(err, &ue) || !regexp.MustCompile(regexp.QuoteMeta(tc.bad)).MatchString(err.Error())):
			t.Errorf("%v: got %v, want a usage error about %s", tc.args, err, tc.bad)
		}
		if len(tc.args) > 1 && tc.args[1] == "1/3" && (o.Shard != watch.Shard{Index: 1, Count: 3} || o.OnPauseRefused != watch.FallbackCancel) {
			t.Errorf("%v: options %+v", tc.args, o)
		}
	}
}

// `worker watch` against a server with Workflow Pause on pauses a stuck
// agent and lists the halt at /status.
func TestWatchCommand(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	srv, c := pauseServer(t, ctx)

	var stdout, stderr syncBuffer
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(wctx, []string{watchCommand, "--address", srv.FrontendHostPort(), "--query", `TaskQueue="plain"`,
			"--policy", "tool_call", "--poll-interval", "200ms", "--status-addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("watch: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("watch did not stop within 10s")
		}
	})
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "stuck", TaskQueue: "plain"},
		workflows.ParallelToolAgent, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 4, MaxTurns: 10000}); err != nil {
		t.Fatal(err)
	}
	status := regexp.MustCompile(`http://(\S+)/status`)
	for {
		if m := status.FindStringSubmatch(stdout.String()); m != nil {
			// A pause ahead of the halt is counted before the halt is
			// read: wait for the halt it answers to be listed too.
			if st, ok := getStatus(t, "http://"+m[1]+"/status"); ok && st.Pauses > 0 && st.Halts > 0 &&
				len(st.Executions) == 1 && len(st.Executions[0].Halts) > 0 {
				// One pause answers one halt; the halts raised while it
				// landed (it waits for a waiting workflow task to start)
				// or while it held (the task in flight) are superseded.
				hs := st.Executions[0].Halts
				paused := 0
				for _, h := range hs {
					switch {
					case h.Action == "pause":
						paused++
					case h.Action != "superseded" || !h.Answered:
						t.Errorf("halt %d: action %q, answered %v", h.Seq, h.Action, h.Answered)
					}
				}
				if paused != 1 {
					t.Errorf("%d halts paused, want 1: status %+v", paused, st)
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no pause in the status; stdout %s; stderr %s", stdout.String(), stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func getStatus(t *testing.T, url string) (watch.Status, bool) {
	var st watch.Status
	resp, err := http.Get(url)
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Errorf("/status: %v", err)
		return st, false
	}
	return st, true
}
