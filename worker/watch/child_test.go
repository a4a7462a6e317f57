//go:build unix

package watch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/workflows"
)

// The lag benchmark can run its watcher in a process of its own (the
// test binary again, running TestWatchChild), so that the watcher's CPU
// time and heap are measured apart from the embedded server's and the
// agents' worker's, which share the benchmark's process.

// childAddrEnv carries the frontend's address to the child.
const childAddrEnv = "LOOPGUARD_WATCH_CHILD_ADDR"

// childSample is what the child reports when asked: its CPU time, its
// live heap after a GC, and the watcher's status.
type childSample struct {
	CPU    time.Duration `json:"cpu"`
	Heap   uint64        `json:"heap"`
	Status Status        `json:"status"`
}

// TestWatchChild is the watcher process of the lag benchmark; it skips
// unless the benchmark starts it. Each line on stdin asks for a sample;
// the end of stdin stops it.
func TestWatchChild(t *testing.T) {
	addr := os.Getenv(childAddrEnv)
	if addr == "" {
		t.Skip("the lag benchmark's watcher process (TestWatchLag with LOOPGUARD_WATCH_CHILD=1)")
	}
	if os.Getenv("LOOPGUARD_WATCH_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 4096
	}
	c, err := client.Dial(client.Options{HostPort: addr, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := New(Options{Client: c, Query: fmt.Sprintf("TaskQueue=%q", plainQueue), PollInterval: time.Second,
		Guard: workflows.ParallelGuardOptions()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		if path := os.Getenv("LOOPGUARD_WATCH_HEAPPROFILE"); path != "" {
			// Where the heap goes: the last sample's profile.
			if f, err := os.Create(path); err == nil {
				_ = pprof.WriteHeapProfile(f)
				_ = f.Close()
			}
		}
		b, _ := json.Marshal(childSample{CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), Heap: ms.HeapAlloc, Status: w.Status()})
		fmt.Printf("CHILD %s\n", b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// childWatcher is the benchmark's side of the watcher process.
type childWatcher struct {
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// childWatcher starts the watcher process against ts; it stops when
// the test ends.
func (ts *testServer) childWatcher(t *testing.T) *childWatcher {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchChild$", "-test.v", "-test.timeout=0")
	cmd.Env = append(os.Environ(), childAddrEnv+"="+ts.srv.FrontendHostPort())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("watcher process: %v", err)
		}
	})
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 256<<20)
	return &childWatcher{stdin: stdin, out: out}
}

// sample asks the watcher process for a sample.
func (cw *childWatcher) sample(t *testing.T) childSample {
	t.Helper()
	if _, err := io.WriteString(cw.stdin, "sample\n"); err != nil {
		t.Fatal(err)
	}
	for cw.out.Scan() {
		line, ok := strings.CutPrefix(cw.out.Text(), "CHILD ")
		if !ok {
			continue // the test runner's own lines
		}
		var s childSample
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatalf("the watcher process ended: %v", cw.out.Err())
	return childSample{}
}

// lagWatcher is the lag benchmark's watcher: in a process of its own
// when LOOPGUARD_WATCH_CHILD is set (sample then reports its usage),
// else in the benchmark's process (sample returns nil).
func (ts *testServer) lagWatcher(t *testing.T) (status func() Status, sample func() *childSample) {
	t.Helper()
	if os.Getenv("LOOPGUARD_WATCH_CHILD") == "" {
		w, _ := ts.watcher(t, Options{PollInterval: time.Second})
		return w.Status, func() *childSample { return nil }
	}
	cw := ts.childWatcher(t)
	var last childSample
	return func() Status { return last.Status }, func() *childSample {
		s := cw.sample(t)
		last = s
		return &s
	}
}

// reportWatcher reports the watcher process's CPU time and heap: from
// its start (s0) to every agent paused (s1), per execution and per call
// read, then over a minute of following the paused executions.
func (ts *testServer) reportWatcher(t *testing.T, ctx context.Context, n int, took time.Duration, s0, s1 *childSample, sample func() *childSample, runs []string) {
	t.Helper()
	calls := 0
	for i, run := range runs {
		calls += count(ts.history(t, ctx, fmt.Sprintf("lag-%d", i), run), enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
	}
	followed := max(s1.Status.Followed, 1)
	cpu := s1.CPU - s0.CPU
	t.Logf("watcher process: %s CPU over %s of wall time for %d executions (%d calls read): %s CPU per execution, %.0f calls read per CPU-second",
		cpu.Round(time.Millisecond), took.Round(time.Millisecond), n, calls, (cpu / time.Duration(n)).Round(time.Microsecond), float64(calls)/cpu.Seconds())
	t.Logf("watcher process: live heap %d KiB at the start, %d KiB following %d executions: %.1f KiB per followed execution",
		s0.Heap>>10, s1.Heap>>10, s1.Status.Followed, float64(int64(s1.Heap)-int64(s0.Heap))/1024/float64(followed))
	idle := time.Minute
	if d, err := time.ParseDuration(os.Getenv("LOOPGUARD_WATCH_IDLE")); err == nil {
		idle = d
	}
	time.Sleep(idle)
	s2 := sample()
	per := time.Duration(float64(s2.CPU-s1.CPU) / float64(followed) / idle.Minutes())
	t.Logf("watcher process: following %d paused executions for %s took %s CPU: %s CPU per followed execution per minute (%d per CPU core at this rate)",
		s2.Status.Followed, idle, (s2.CPU - s1.CPU).Round(time.Millisecond), per.Round(time.Microsecond), int(time.Minute/max(per, 1)))
}
