package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// Environment of the worker process TestWorkerLoss re-executes.
const (
	workerAddrEnv  = "LOOPGUARD_TESTSUITE_WORKER_ADDR"
	workerQueueEnv = "LOOPGUARD_TESTSUITE_WORKER_QUEUE"
	workerReadyEnv = "LOOPGUARD_TESTSUITE_WORKER_READY"
)

// TestWorkerProcess is not a test: it is the guarded worker process that
// TestWorkerLoss starts (re-executing the test binary) and kills. It runs
// only when workerAddrEnv is set.
func TestWorkerProcess(t *testing.T) {
	addr := os.Getenv(workerAddrEnv)
	if addr == "" {
		t.Skip("helper process for TestWorkerLoss")
	}
	c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet()})
	require.NoError(t, err)
	defer c.Close()
	testsuite.StartWorker(t, c, os.Getenv(workerQueueEnv), testsuite.WorkerOptions{
		Guard:    guardPtr(interceptor.Options{}),
		Register: fixtures.Register,
		Options:  worker.Options{StickyScheduleToStartTimeout: time.Second},
	})
	require.NoError(t, os.WriteFile(os.Getenv(workerReadyEnv), []byte("ready"), 0o644))
	time.Sleep(2 * time.Minute) // until killed
}

// workerProcess is a worker running in another process.
type workerProcess struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

// startWorkerProcess re-executes the test binary as a guarded worker on
// queue and waits until it polls.
func startWorkerProcess(t *testing.T, ctx context.Context, addr, queue string) *workerProcess {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	p := &workerProcess{}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.timeout=3m")
	p.cmd.Env = append(os.Environ(), workerAddrEnv+"="+addr, workerQueueEnv+"="+queue, workerReadyEnv+"="+ready)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.kill(t)
		}
	})
	for {
		if _, err := os.Stat(ready); err == nil {
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("worker process not ready: %v\n%s", ctx.Err(), p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kill SIGKILLs the process: no graceful shutdown, no goodbye to the server.
func (p *workerProcess) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	err := p.cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, "signal: killed", exit.Error())
}

// TestWorkerLoss kills worker processes (SIGKILL) twice: first while one
// workflow is paused on a halt and another is inside a guarded activity,
// then, on the replacement worker, while a third is inside a guarded
// activity. After each loss a new worker process takes over: the paused
// workflow is still paused with its evidence intact (the status each new
// worker rebuilds by replay shows the same HaltEvent), and it resumes on
// the last worker and completes; the interrupted activities are retried on
// the new workers and their workflows complete. No state is lost, no
// workflow task fails.
func TestWorkerLoss(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	queue := queueFor(t)
	dir := t.TempDir()
	waitFile := func(path string) {
		t.Helper()
		for {
			if _, err := os.Stat(path); err == nil {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s never appeared: %v", path, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	gated := func(name string) (fixtures.Turn, string, string) {
		gate, started := filepath.Join(dir, name+".gate"), filepath.Join(dir, name+".started")
		return fixtures.Turn{Node: "Gate", Output: name + " done", GateFile: gate, StartedFile: started}, gate, started
	}

	first := startWorkerProcess(t, ctx, srv.FrontendHostPort(), queue)

	pausedID := queue + "-paused"
	paused := start(t, ctx, c, queue, pausedID, fixtures.WorkflowScripted, fixtures.Stalling("Code", 6, 1))
	turn1, gate1, started1 := gated("busy1")
	busy1 := start(t, ctx, c, queue, queue+"-busy1", fixtures.WorkflowScripted, []fixtures.Turn{
		{Node: "Plan", Output: "plan"}, turn1, {Node: "Plan", Output: "after the gate"},
	})
	before := waitStatus(t, ctx, c, pausedID, testsuite.Halted(1))
	require.Equal(t, protocol.ReasonStalled, before.Halt.HaltReason)
	waitFile(started1)

	// Loss 1: a paused workflow and a running guarded activity.
	first.kill(t)
	second := startWorkerProcess(t, ctx, srv.FrontendHostPort(), queue)
	after := waitStatus(t, ctx, c, pausedID, testsuite.Halted(1))
	assert.Equal(t, before.Halt, after.Halt, "same halt and evidence after the first worker was lost")
	assert.Equal(t, before.Nodes, after.Nodes)
	assert.Equal(t, before.Cycles, after.Cycles)
	assert.Equal(t, before.TotalCalls, after.TotalCalls)

	// Loss 2: a guarded activity running on the replacement worker.
	turn2, gate2, started2 := gated("busy2")
	busy2 := start(t, ctx, c, queue, queue+"-busy2", fixtures.WorkflowScripted, []fixtures.Turn{
		{Node: "Research", Output: "look"}, turn2, {Node: "Research", Output: "after the gate"},
	})
	waitFile(started2)
	second.kill(t)
	third := startWorkerProcess(t, ctx, srv.FrontendHostPort(), queue)
	after = waitStatus(t, ctx, c, pausedID, testsuite.Halted(1))
	assert.Equal(t, before.Halt, after.Halt, "same halt and evidence after the second worker was lost")

	require.NoError(t, c.SignalWorkflow(ctx, pausedID, "", protocol.DefaultResumeSignal, map[string]string{"by": "test", "reason": "third worker"}))
	res := result(t, ctx, paused)
	assert.Equal(t, 6, res.Calls)
	assert.False(t, res.Escalated)

	require.NoError(t, os.WriteFile(gate1, nil, 0o644))
	require.NoError(t, os.WriteFile(gate2, nil, 0o644))
	assert.Equal(t, []string{"plan", "busy1 done", "after the gate"}, result(t, ctx, busy1).Outputs)
	assert.Equal(t, []string{"look", "busy2 done", "after the gate"}, result(t, ctx, busy2).Outputs)

	requireHealthyHistory(t, ctx, c, pausedID, "")
	for _, id := range []string{queue + "-busy1", queue + "-busy2"} {
		h := requireHealthyHistory(t, ctx, c, id, "")
		var attempt int32
		for _, e := range h.GetEvents() {
			if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED {
				attempt = max(attempt, e.GetActivityTaskStartedEventAttributes().GetAttempt())
			}
		}
		assert.GreaterOrEqual(t, attempt, int32(2), "%s: the gated activity was retried after its worker died", id)
	}
	third.kill(t)
}
