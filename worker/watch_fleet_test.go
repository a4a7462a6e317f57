package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/watch"
	"github.com/loopguard/loopguard/workflows"
)

func TestWatchFleetFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  string // a usage error's text, "" for none
	}{
		{args: []string{"--fleet", "--shards", "4", "--policy", "tool_call", "--workflows", "A,B"}},
		{args: []string{"--fleet-worker-only"}},
		{args: []string{"--shards", "4"}, bad: "applies to --fleet"},
		{args: []string{"--fleet", "--shards", "-1"}, bad: "--shards"},
		{args: []string{"--fleet", "--shard", "1/2"}, bad: "exclude each other"},
		{args: []string{"--fleet", "--fleet-worker-only"}, bad: "exclude each other"},
		{args: []string{"--fleet", "--heartbeat-timeout", "10ms"}, bad: "--heartbeat-timeout"},
	} {
		cfg, o, err := watchOptions(tc.args)
		var ue *usageError
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.bad != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%v: got %v, want a usage error about %s", tc.args, err, tc.bad)
		}
		if tc.bad != "" || !cfg.fleet.enabled {
			continue
		}
		// The policy travels in the fleet's input and reads back the same.
		in, err := fleetInput(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		var g interceptor.Options
		if err := g.ApplyPolicy([]byte(in.Policy)); err != nil || g.Grain != interceptor.GrainToolCall ||
			strings.Join(g.Workflows, ",") != "A,B" || in.Shards != 4 || in.HeartbeatTimeout != watch.DefaultHeartbeatTimeout {
			t.Errorf("%v: fleet input %+v, policy read back %+v, %v", tc.args, in, g, err)
		}
	}
}

// Two machines run the same `worker watch --fleet --shards 2` command:
// they join one fleet workflow, a stuck agent is paused once, and
// /status lists both shards' heartbeats.
func TestWatchFleetCommand(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	srv, c := pauseServer(t, ctx)

	outs, errs := make([]*syncBuffer, 2), make([]*syncBuffer, 2)
	for i := range outs {
		var stdout, stderr syncBuffer
		outs[i], errs[i] = &stdout, &stderr
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- run(wctx, []string{watchCommand, "--fleet", "--shards", "2", "--heartbeat-timeout", "3s", "--address", srv.FrontendHostPort(),
				"--query", `TaskQueue="plain"`, "--policy", "tool_call", "--poll-interval", "200ms", "--status-addr", "127.0.0.1:0"}, &stdout, &stderr)
		}()
		t.Cleanup(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("watch --fleet: %v; stderr %s", err, stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Error("watch --fleet did not stop within 20s")
			}
		})
	}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "stuck", TaskQueue: "plain"},
		workflows.ParallelToolAgent, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 4, MaxTurns: 10000}); err != nil {
		t.Fatal(err)
	}
	status := regexp.MustCompile(`http://(\S+)/status`)
	runs := regexp.MustCompile(`\(run (\S+)\)`)
	start := time.Now()
	for {
		m := status.FindStringSubmatch(outs[1].String())
		var shards []watch.ShardProgress
		if m != nil && getJSON("http://"+m[1]+"/status", &shards) && len(shards) == 2 && shards[0].Pauses+shards[1].Pauses > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no pause in the fleet's status; stdout %s / %s", outs[0].String(), outs[1].String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Logf("the fleet's status shows the pause %s after the agent started", time.Since(start).Round(time.Millisecond))
	r0, r1 := runs.FindStringSubmatch(outs[0].String()), runs.FindStringSubmatch(outs[1].String())
	if r0 == nil || r1 == nil || r0[1] != r1[1] {
		t.Errorf("the two commands' fleets: %q / %q", outs[0].String(), outs[1].String())
	}
	time.Sleep(time.Second)
	n := 0
	it := c.GetWorkflowHistory(ctx, "stuck", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d Paused events, want 1", n)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr: %s\n%s", errs[0].String(), errs[1].String())
		}
	})
}

// pauseServer starts an embedded server with Workflow Pause on and a
// worker of the sample workflows without the interceptor on "plain".
func pauseServer(t *testing.T, ctx context.Context) (*devserver.Server, client.Client) {
	t.Helper()
	srv, err := devserver.Start(ctx, devserver.Options{Ephemeral: true, FreePorts: true, UIDisabled: true,
		DynamicConfig: map[string]any{"frontend.WorkflowPauseEnabled": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c, err := srv.NewClient(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	w := worker.New(c, "plain", worker.Options{}) // no interceptor
	workflows.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return srv, c
}

// getJSON decodes url's JSON into v.
func getJSON(url string, v any) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
}
