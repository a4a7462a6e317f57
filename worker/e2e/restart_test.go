package e2e_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

func port(t testing.TB, hostPort string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(hostPort)
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return n
}

// TestServerRestart pauses a workflow on a file-backed server, stops the
// server (and its worker), starts a new server on the same data directory
// and ports and a new worker: the workflow is still paused on the same
// halt, resumes, and completes.
func TestServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dataDir := t.TempDir()
	queue := queueFor(t)
	id := queue + "-wf"

	srv := devtest.StartServer(t, devserver.Options{DataDir: dataDir, UIDisabled: true})
	c, err := srv.NewClient(testClientOptions())
	require.NoError(t, err)
	stopWorker := fixtureWorker(t, c, queue, guardPtr(interceptor.Options{}))
	run := start(t, ctx, c, queue, id, fixtures.WorkflowScripted, fixtures.Stalling("Code", 6, 1))
	firstRunID := run.GetRunID()
	before := waitStatus(t, ctx, c, id, testsuite.Halted(1))

	stopWorker()
	c.Close()
	frontend, httpPort := port(t, srv.FrontendHostPort()), port(t, srv.HTTPHostPort())
	require.NoError(t, srv.Stop())

	srv2 := devtest.StartServer(t, devserver.Options{DataDir: dataDir, UIDisabled: true, FrontendPort: frontend, HTTPPort: httpPort})
	require.Equal(t, srv.FrontendHostPort(), srv2.FrontendHostPort(), "same address")
	c2 := devtest.NewClient(t, srv2)
	fixtureWorker(t, c2, queue, guardPtr(fixtures.DriftedOptions()))

	after := waitStatus(t, ctx, c2, id, testsuite.Halted(1))
	assert.Equal(t, before.Halt, after.Halt, "the same halt after the server restart")
	assert.Equal(t, before.TotalCalls, after.TotalCalls)
	assert.Equal(t, firstRunID, after.Halt.RunID)

	require.NoError(t, c2.SignalWorkflow(ctx, id, "", protocol.DefaultResumeSignal, nil))
	var res fixtures.Result
	require.NoError(t, c2.GetWorkflow(ctx, id, "").Get(ctx, &res))
	assert.Equal(t, 6, res.Calls)
	assert.False(t, res.Escalated)
	requireHealthyHistory(t, ctx, c2, id, "")
}
