package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/internal/scripted"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// TestEncryptionCodec runs guarded workflows on a worker whose client
// encrypts every payload (converter.NewCodecDataConverter with an
// encryption-like codec): in observe mode the guard recognises its own
// encrypted loop.halted echo and the workflow completes; in pause mode a
// resume sent through the app's own encrypting client resumes it. Nothing
// the guard wrote is plain text in history, and each history replays with
// the codec, with every Options field drifted.
//
// The same runs go through a data converter not built on the SDK's
// composite converter (JSON in payloads of its own encoding, no RawValue,
// like samples-go's pso): the guard reads results, its echo and the resume
// without a false repeated_error or a hang.
func TestEncryptionCodec(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	type run struct {
		name      string
		dc        converter.DataConverter
		encrypted bool
		opts      interceptor.Options
	}
	var runs []run
	for _, conv := range []struct {
		name      string
		dc        converter.DataConverter
		encrypted bool
	}{
		{"encrypting", scripted.EncryptingDataConverter(), true},
		{"own-json", scripted.OwnJSONDataConverter(), false},
	} {
		runs = append(runs,
			run{conv.name + "-observe", conv.dc, conv.encrypted, interceptor.Options{OnHalt: protocol.OnHaltObserve}},
			run{conv.name + "-pause", conv.dc, conv.encrypted, interceptor.Options{MaxCost: 1000, PauseTimeout: time.Hour,
				IgnoreFields: []string{"at"}, Nodes: map[string]interceptor.NodeOptions{"Code": {MaxCalls: 20}}}},
		)
	}
	for _, tc := range runs {
		t.Run(tc.name, func(t *testing.T) {
			dc := tc.dc
			c, err := srv.NewClient(client.Options{DataConverter: dc, Logger: quiet()})
			require.NoError(t, err)
			t.Cleanup(c.Close)
			queue := queueFor(t)
			testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{Guard: guardPtr(tc.opts), Register: fixtures.Register})
			id := queue + "-wf"
			run := start(t, ctx, c, queue, id, fixtures.WorkflowScripted, fixtures.Stalling("Code", 8, 2))
			if tc.opts.OnHalt != protocol.OnHaltObserve {
				halted := waitStatus(t, ctx, c, id, testsuite.Halted(1))
				assert.Equal(t, protocol.ReasonStalled, halted.Halt.HaltReason)
				require.NoError(t, c.SignalWorkflow(ctx, id, "", protocol.DefaultResumeSignal,
					protocol.ResumeRequest{By: "ana", Reason: "through the encrypting client"}))
			}
			res := result(t, ctx, run)
			assert.Equal(t, 8, res.Calls)
			assert.False(t, res.Escalated)
			s, err := testsuite.QueryStatus(ctx, c, id, "")
			require.NoError(t, err)
			assert.Equal(t, 1, s.Halts)
			assert.Nil(t, s.LastRejected, "nothing rejected")

			h := exportHistory(t, ctx, c, id, "")
			info := testsuite.InspectWith(h, dc)
			assert.Zero(t, info.WorkflowTaskFailures)
			assert.True(t, info.Guarded)
			assert.Equal(t, interceptor.GuardVersion, info.GuardVersion, "what new executions run")
			assert.Equal(t, 1, countEvents(t, ctx, c, id, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)-
				map[bool]int{true: 0, false: 1}[tc.opts.OnHalt == protocol.OnHaltObserve], "loop.halted once")
			if tc.encrypted {
				raw, err := testsuite.MarshalHistory(h)
				require.NoError(t, err)
				for _, plain := range []string{"Code same output", "identical_output", "loop.status"} {
					assert.NotContains(t, string(raw), plain, "plain text in history")
				}
			}

			drifts, err := fixtures.Drifts(tc.opts)
			require.NoError(t, err)
			for _, d := range drifts {
				err := testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: d.Options, DataConverter: dc, Register: fixtures.RegisterWorkflows})
				assert.NoError(t, err, "replay with %s", d.Name)
			}
			err = testsuite.ReplayHistory(h, testsuite.ReplayOptions{Unguarded: true, DataConverter: dc, Register: fixtures.RegisterWorkflows})
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), "this history was recorded with loopguard; install the guard (or its retire mode) on the replayer"), err.Error())
		})
	}
}

// TestRetireOnServer: a worker in retire mode finishes a guarded execution
// paused under the guard (it replays, the resume is honoured), and starts
// new executions unguarded: no version marker, no pinned options, so they
// replay without the guard at all.
func TestRetireOnServer(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	queue := queueFor(t)

	stop := fixtureWorker(t, c, queue, guardPtr(interceptor.Options{}))
	guarded := queue + "-guarded"
	run := start(t, ctx, c, queue, guarded, fixtures.WorkflowScripted, fixtures.Stalling("Code", 8, 2))
	waitStatus(t, ctx, c, guarded, testsuite.Halted(1))
	requireCountedAsGuarded(t, ctx, c, guarded)
	stop()

	fixtureWorker(t, c, queue, guardPtr(interceptor.Options{Retire: true}))
	s := waitStatus(t, ctx, c, guarded, testsuite.Halted(1))
	assert.Equal(t, protocol.ReasonStalled, s.Halt.HaltReason, "the retiring worker replays the pause")
	require.NoError(t, c.SignalWorkflow(ctx, guarded, "", protocol.DefaultResumeSignal, nil))
	assert.Equal(t, 8, result(t, ctx, run).Calls)
	h := requireHealthyHistory(t, ctx, c, guarded, "")
	require.NoError(t, testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: interceptor.Options{Retire: true}, Register: fixtures.RegisterWorkflows}))

	fresh := queue + "-fresh"
	res := result(t, ctx, start(t, ctx, c, queue, fresh, fixtures.WorkflowScripted, fixtures.Stalling("Code", 8, 2)))
	assert.Equal(t, 8, res.Calls, "not guarded: no halt")
	hf := exportHistory(t, ctx, c, fresh, "")
	assert.False(t, testsuite.Inspect(hf).Guarded, "no version marker")
	require.NoError(t, testsuite.ReplayHistory(hf, testsuite.ReplayOptions{Unguarded: true, Register: fixtures.RegisterWorkflows}),
		"a new execution on a retiring worker replays with the guard removed")
}

// requireCountedAsGuarded: the rollback query the docs give
// (interceptor.RunningGuardedQuery) counts a running guarded execution on
// the real server's visibility, so an operator who drains by it does not
// remove the guard under it.
func requireCountedAsGuarded(t *testing.T, ctx context.Context, c client.Client, id string) {
	t.Helper()
	query := interceptor.RunningGuardedQuery() + ` AND WorkflowId = "` + id + `"`
	require.Eventually(t, func() bool {
		resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		require.NoError(t, err)
		return resp.GetCount() == 1
	}, 30*time.Second, 200*time.Millisecond, "the rollback query does not count %s", id)
}
