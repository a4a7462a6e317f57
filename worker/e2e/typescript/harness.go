package typescript

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// RequireEnv is the environment variable that turns Start's skip into a
// failure when it is "1": CI sets it, so that the TypeScript tests run
// there rather than skip.
const RequireEnv = "LOOPGUARD_REQUIRE_TS_E2E"

// PollingLine starts the line the worker process prints on stdout once it
// polls its task queue.
const PollingLine = "loopguard-ts-agent: polling "

// Options configures StartWith. Only HostPort and TaskQueue are required.
type Options struct {
	// HostPort is the frontend's address, e.g. srv.FrontendHostPort().
	// Required.
	HostPort string
	// Namespace the worker polls. Default "default".
	Namespace string
	// TaskQueue the worker polls. Required.
	TaskQueue string
	// ModelLatency is how long each model turn (ModelTurn) takes, so that
	// a loop does not finish in a blink. Default 0: as fast as the
	// server goes.
	ModelLatency time.Duration
	// Project is the directory of the TypeScript project whose
	// dist/worker.js runs (its worker takes the flags agent's does and
	// prints the same polling line). Default: the agent (AgentDir).
	Project string
	// ReadyTimeout bounds how long StartWith waits for the worker to poll
	// once it is built, within ctx's deadline. Default 2 minutes: the
	// native bridge loads and connects in a few seconds on an idle
	// machine, far slower on a loaded one.
	ReadyTimeout time.Duration
}

// Worker is a running TypeScript worker process.
type Worker struct {
	// TaskQueue is the task queue it polls.
	TaskQueue string

	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	err    error // the process's exit error, once exited is closed
	once   sync.Once
}

// Start starts the TypeScript agent worker against the server at hostPort
// on taskQueue, as StartWith with the other Options at their defaults.
func Start(ctx context.Context, t testing.TB, hostPort, namespace, taskQueue string) (*Worker, error) {
	t.Helper()
	return StartWith(ctx, t, Options{HostPort: hostPort, Namespace: namespace, TaskQueue: taskQueue})
}

// StartWith builds the agent if needed (Build), starts its worker process
// and returns once the worker polls both the workflow and the activity
// task queue. The process is stopped in t.Cleanup. Where Node.js is not
// available it skips t (or fails it, under RequireEnv).
func StartWith(ctx context.Context, t testing.TB, opts Options) (*Worker, error) {
	t.Helper()
	Require(t)
	if opts.HostPort == "" || opts.TaskQueue == "" {
		return nil, errors.New("typescript: Options.HostPort and TaskQueue are required")
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 2 * time.Minute
	}
	if opts.Project == "" {
		p, err := AgentDir()
		if err != nil {
			return nil, err
		}
		opts.Project = p
	}
	dir, err := BuildProject(ctx, t, opts.Project)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer cancel()
	w, err := spawn(dir, opts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			t.Logf("typescript: stop the worker: %v\n%s", err, w.Output())
		}
	})
	if err := w.waitPolling(ctx, opts); err != nil {
		return nil, fmt.Errorf("typescript: the worker does not poll %s: %w\n%s", opts.TaskQueue, err, w.Output())
	}
	return w, nil
}

func spawn(dir string, opts Options) (*Worker, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("typescript: %w", err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "dist", "worker.js"),
		"--address", opts.HostPort, "--namespace", opts.Namespace, "--task-queue", opts.TaskQueue,
		"--bundle", filepath.Join(dir, "dist", "workflow-bundle.js"),
		"--model-latency-ms", strconv.FormatInt(opts.ModelLatency.Milliseconds(), 10))
	cmd.Dir = dir
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so that a test's Ctrl-C reaches it through
	// Stop, and never the other way round.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("typescript: start the worker: %w", err)
	}
	w := &Worker{TaskQueue: opts.TaskQueue, cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		w.err = cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// waitPolling waits for the worker's polling line, then for the server to
// see its pollers on both task queue types.
func (w *Worker) waitPolling(ctx context.Context, opts Options) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(w.out.String(), PollingLine+opts.TaskQueue) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.exited:
			return fmt.Errorf("the worker exited: %v", w.err)
		case <-tick.C:
		}
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: opts.HostPort, Namespace: opts.Namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return err
	}
	defer c.Close()
	for _, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		for {
			d, err := c.DescribeTaskQueue(ctx, opts.TaskQueue, typ)
			if err == nil && len(d.GetPollers()) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("no %s poller: %w", typ, ctx.Err())
			case <-w.exited:
				return fmt.Errorf("the worker exited: %v", w.err)
			case <-tick.C:
			}
		}
	}
	return nil
}

// Output is what the worker process printed so far, stdout and stderr.
func (w *Worker) Output() string { return w.out.String() }

// Stop stops the worker: SIGTERM (the SDK then shuts down gracefully),
// SIGKILL after 10 s. It returns the process's exit error when that was
// not the signal's doing; calling it again does nothing.
func (w *Worker) Stop() error {
	var err error
	w.once.Do(func() {
		select {
		case <-w.exited:
			err = w.err
			return
		default:
		}
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-w.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
			<-w.exited
			err = errors.New("the worker did not stop within 10 s of SIGTERM: killed")
		}
	})
	return err
}

// Require skips t with the reason where the TypeScript agent cannot run
// here (Available), or fails t when the environment sets RequireEnv=1.
func Require(t testing.TB) {
	t.Helper()
	if ok, reason := Available(); !ok {
		unavailable(t, reason)
	}
}

func unavailable(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("typescript: %s (%s=1 requires the TypeScript tests)", reason, RequireEnv)
		return
	}
	t.Skipf("typescript: %s (set %s=1 to fail instead)", reason, RequireEnv)
}

// Available reports whether the TypeScript agent can run here: node, at
// the version the SDK's package requires (package.json's engines), and
// npm on PATH, and the agent's sources beside this package. When not, the
// reason says what is missing.
func Available() (ok bool, reason string) {
	availableOnce.Do(func() { availableReason = available() })
	return availableReason == "", availableReason
}

var (
	availableOnce   sync.Once
	availableReason string
)

func available() string {
	dir, err := AgentDir()
	if err != nil {
		return err.Error()
	}
	least, err := minNode(dir)
	if err != nil {
		return err.Error()
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return "node (Node.js) is not on PATH"
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return fmt.Sprintf("%s --version: %v", node, err)
	}
	have, err := parseVersion(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Sprintf("%s --version: %v", node, err)
	}
	if slices.Compare(have, least) < 0 {
		return fmt.Sprintf("node %s is older than %s, which the Temporal TypeScript SDK requires", strings.TrimSpace(string(out)), joinVersion(least))
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "npm is not on PATH"
	}
	return ""
}

// AgentDir is the directory of the TypeScript agent's sources (agent,
// beside this file).
func AgentDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("typescript: cannot locate the agent's sources")
	}
	dir := filepath.Join(filepath.Dir(file), "agent")
	if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err != nil {
		return "", fmt.Errorf("typescript: the agent's sources are not here: %w", err)
	}
	return dir, nil
}

// FrameworksDir is the directory of the agents written with Temporal's AI
// integrations (frameworks, beside this file): @temporalio/ai-sdk and
// @temporalio/openai-agents with a scripted model.
func FrameworksDir() (string, error) {
	a, err := AgentDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(a), "frameworks"), nil
}

// minNode is the oldest Node.js the agent's package.json accepts
// (engines.node, ">= x.y.z").
func minNode(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("typescript: %w", err)
	}
	var p struct {
		Engines struct {
			Node string `json:"node"`
		} `json:"engines"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("typescript: package.json: %w", err)
	}
	v, ok := strings.CutPrefix(strings.ReplaceAll(p.Engines.Node, " ", ""), ">=")
	if !ok {
		return nil, fmt.Errorf("typescript: package.json: engines.node %q is not \">= version\"", p.Engines.Node)
	}
	return parseVersion(v)
}

// parseVersion reads "v20.3.0" or "20.3.0".
func parseVersion(s string) ([]int, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	v := make([]int, 3)
	for i := range min(len(parts), 3) {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return nil, fmt.Errorf("version %q: %w", s, err)
		}
		v[i] = n
	}
	return v, nil
}

func joinVersion(v []int) string {
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}

// CacheDir is where Build installs and builds the agent:
// $XDG_CACHE_HOME/loopguard/ts-agent, or ~/.cache/loopguard/ts-agent.
func CacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("typescript: no cache directory: %w", err)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "loopguard", "ts-agent"), nil
}

// buildMu makes one Build at a time in a test binary; builds in other
// processes are kept apart by building into a fresh directory and
// renaming it into place.
var buildMu sync.Mutex

// Build installs the agent's npm packages (npm ci) into a directory of
// CacheDir named after the hash of package-lock.json, unless there
// already, and compiles the TypeScript and bundles the workflow code into
// a directory under it named after the hash of the sources, unless there
// already. It returns the latter; its dist holds worker.js and
// workflow-bundle.js. It logs to t how long each step took.
func Build(ctx context.Context, t testing.TB) (string, error) {
	t.Helper()
	src, err := AgentDir()
	if err != nil {
		return "", err
	}
	return BuildProject(ctx, t, src)
}

// BuildProject is Build for the TypeScript project in directory src (its
// package.json, package-lock.json, tsconfig.json and src/*.ts; its build
// script's steps: tsc, then dist/bundle.js writing the workflow bundle).
func BuildProject(ctx context.Context, t testing.TB, src string) (string, error) {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	lockHash, err := hashFiles(src, "package.json", "package-lock.json")
	if err != nil {
		return "", err
	}
	sources, err := sourceFiles(src)
	if err != nil {
		return "", err
	}
	srcHash, err := hashFiles(src, sources...)
	if err != nil {
		return "", err
	}
	modules := filepath.Join(cache, lockHash)
	if err := once(modules, func(tmp string) error {
		for _, f := range []string{"package.json", "package-lock.json"} {
			if err := copyFile(filepath.Join(src, f), filepath.Join(tmp, f)); err != nil {
				return err
			}
		}
		began := time.Now()
		if err := run(ctx, tmp, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"); err != nil {
			return err
		}
		t.Logf("typescript: npm ci into %s took %v", modules, time.Since(began).Round(time.Millisecond))
		return nil
	}); err != nil {
		return "", err
	}
	build := filepath.Join(modules, "build-"+srcHash)
	err = once(build, func(tmp string) error {
		for _, f := range sources {
			if err := copyFile(filepath.Join(src, f), filepath.Join(tmp, f)); err != nil {
				return err
			}
		}
		began := time.Now()
		// The build directory sits in the one that holds node_modules, so
		// that tsc and node find the packages by walking up.
		if err := run(ctx, tmp, "node", filepath.Join(modules, "node_modules", "typescript", "bin", "tsc"), "-p", "."); err != nil {
			return err
		}
		if err := run(ctx, tmp, "node", filepath.Join("dist", "bundle.js"), filepath.Join("dist", "workflow-bundle.js")); err != nil {
			return err
		}
		t.Logf("typescript: compiling and bundling the agent took %v", time.Since(began).Round(time.Millisecond))
		return nil
	})
	return build, err
}

// once makes dir with fill unless it exists: fill fills a fresh sibling
// directory, renamed to dir when it succeeds. A concurrent maker's dir
// wins; ours is removed.
func once(dir string, fill func(tmp string) error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("typescript: %w", err)
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := dir + ".tmp-" + hex.EncodeToString(suffix[:])
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fmt.Errorf("typescript: %w", err)
	}
	if err := fill(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		if _, statErr := os.Stat(dir); statErr == nil {
			return nil
		}
		return fmt.Errorf("typescript: %w", err)
	}
	return nil
}

// run runs a build step in dir; its error holds the step's output.
func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("typescript: %s %s: %w\n%s", name, strings.Join(args, " "), err, tail(out.String(), 4000))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// sourceFiles are the files the build reads, relative to dir, sorted:
// package.json, package-lock.json, tsconfig.json and src.
func sourceFiles(dir string) ([]string, error) {
	files := []string{"package-lock.json", "package.json", "tsconfig.json"}
	entries, err := os.ReadDir(filepath.Join(dir, "src"))
	if err != nil {
		return nil, fmt.Errorf("typescript: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".ts") {
			files = append(files, filepath.Join("src", e.Name()))
		}
	}
	slices.Sort(files)
	return files, nil
}

// hashFiles is the first 16 hex digits of a SHA-256 over the names and
// contents of files in dir.
func hashFiles(dir string, files ...string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", fmt.Errorf("typescript: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("typescript: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("typescript: %w", err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		return fmt.Errorf("typescript: %w", err)
	}
	return nil
}

// syncBuffer is the worker's output, written by the process and read by
// the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
