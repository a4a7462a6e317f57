// Package clitest drives halted guarded workflows with the official
// Temporal CLI, exactly as an operator would: it resumes and escalates them
// with `temporal workflow signal` and `temporal workflow update execute`,
// reads `temporal workflow query --type loop.status`, runs the commands the
// guard itself prints (interceptor.OperatorCommands), and replays a history
// exported with `temporal workflow show --output json`.
//
// The CLI is the version named in temporal-cli.version (the newest the Go
// module proxy serves that `go install` can build: later releases carry a
// replace directive). .ci/run builds it once, before the tests, into
// os.UserCacheDir()/loopguard/temporal-cli-<version>/temporal and passes it
// in LOOPGUARD_TEMPORAL_CLI; otherwise the test builds it there itself,
// within what go test's -timeout leaves. A CLI that cannot be had fails the
// test with the reason and the command that builds it; only -short skips it.
package clitest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/workflows"
)

const (
	cliModule = "github.com/temporalio/cli/cmd/temporal"
	// buildTimeout fits a cold build on a 2-core machine that is not
	// overloaded: it links a Temporal server (the worker's, of the same
	// size, is 19 CPU-minutes); about 40 minutes were seen under a load of
	// 20 to 30.
	buildTimeout = 20 * time.Minute
	// testNeeds is what TestCLI itself needs once the CLI is there.
	testNeeds = 3 * time.Minute
)

//go:embed temporal-cli.version
var cliVersionFile string

var cliVersion = strings.TrimSpace(cliVersionFile)

// cliLdflags stamps the version into the CLI as its release build
// (goreleaser) does: built with plain go install, `temporal --version`
// says 0.0.0-DEV.
func cliLdflags() string {
	return "-X github.com/temporalio/cli/temporalcli.Version=" + strings.TrimPrefix(cliVersion, "v")
}

// reportsVersion checks that the CLI at bin says it is cliVersion.
func reportsVersion(bin string) error {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", bin, err)
	}
	if want := "temporal version " + strings.TrimPrefix(cliVersion, "v") + " "; !strings.HasPrefix(string(out), want) {
		return fmt.Errorf("%s says %q, not version %s", bin, strings.TrimSpace(string(out)), cliVersion)
	}
	return nil
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// temporalCLI returns the path of the official CLI, building it into the
// user cache directory if it is not there yet, or fails the test with why.
func temporalCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("LOOPGUARD_TEMPORAL_CLI"); p != "" {
		if err := executable(p); err != nil {
			t.Fatalf("LOOPGUARD_TEMPORAL_CLI=%s: %v (under .ci/run: the build of the temporal CLI %s failed, see its output above)", p, err, cliVersion)
		}
		if err := reportsVersion(p); err != nil {
			t.Fatalf("LOOPGUARD_TEMPORAL_CLI: %v", err)
		}
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no user cache directory to build the temporal CLI into (%v): build it anywhere with `go install %s@%s` and set LOOPGUARD_TEMPORAL_CLI to it", err, cliModule, cliVersion)
	}
	dir := filepath.Join(cache, "loopguard", "temporal-cli-"+cliVersion)
	bin := filepath.Join(dir, "temporal")
	if executable(bin) == nil {
		err := reportsVersion(bin)
		if err == nil {
			return bin
		}
		t.Logf("building the CLI again: %v", err) // built before it was stamped: a link, when the build cache has it
	}
	howto := fmt.Sprintf("build it once with\n\tGOBIN=%s go install -ldflags '%s' %s@%s\n(or run `bash .ci/run`)", dir, cliLdflags(), cliModule, cliVersion)
	if testing.Short() {
		t.Skipf("the temporal CLI %s is not built yet (-short): %s", cliVersion, howto)
	}
	howto += ", or pass -short to skip this test"
	budget := buildTimeout
	if d, ok := t.Deadline(); ok {
		budget = min(budget, time.Until(d)-testNeeds)
	}
	if budget < time.Minute {
		t.Fatalf("the temporal CLI %s is not built and go test's -timeout leaves no time to build it (a cold build takes 10 minutes or more on 2 cores; the test allows %v): %s", cliVersion, buildTimeout, howto)
	}
	t.Logf("building the temporal CLI %s into %s (at most %v)", cliVersion, dir, budget.Round(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, "go", "install", "-ldflags", cliLdflags(), cliModule+"@"+cliVersion)
	cmd.Dir = t.TempDir() // outside this module
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cannot build the temporal CLI in %v (go install %s@%s): %v\n%s\n%s", time.Since(began).Round(time.Second), cliModule, cliVersion, errors.Join(err, ctx.Err()), tail(out, 40), howto)
	}
	t.Logf("built the temporal CLI in %v", time.Since(began).Round(time.Second))
	if err := reportsVersion(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func tail(out []byte, lines int) string {
	l := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// cli runs the CLI against a server, as a human would from a shell.
type cli struct {
	t    *testing.T
	bin  string
	addr string
	ns   string
}

func (c cli) run(ctx context.Context, args ...string) (string, error) {
	c.t.Helper()
	args = append(args, "--address", c.addr, "--namespace", c.ns)
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = c.t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+c.t.TempDir(), "NO_COLOR=1") // no user config
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	shown := strings.TrimSpace(out.String())
	if len(shown) > 1500 {
		shown = shown[:1500] + "\n[… output truncated]"
	}
	c.t.Logf("$ temporal %s\n%s", strings.Join(args, " "), shown)
	return out.String(), err
}

func (c cli) mustRun(ctx context.Context, args ...string) string {
	c.t.Helper()
	out, err := c.run(ctx, args...)
	require.NoError(c.t, err, out)
	return out
}

// status reads loop.status with `temporal workflow query -o json`.
func (c cli) status(ctx context.Context, id string) protocol.Status {
	c.t.Helper()
	out := c.mustRun(ctx, "workflow", "query", "--workflow-id", id, "--type", protocol.DefaultStatusQuery, "--output", "json")
	var resp struct {
		QueryResult []protocol.Status `json:"queryResult"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(out), &resp), out)
	require.Len(c.t, resp.QueryResult, 1, out)
	return resp.QueryResult[0]
}

func (c cli) waitHalted(ctx context.Context, id string, seq int) protocol.Status {
	c.t.Helper()
	for {
		out, err := c.run(ctx, "workflow", "query", "--workflow-id", id, "--type", protocol.DefaultStatusQuery, "--output", "json")
		if err == nil {
			var resp struct {
				QueryResult []protocol.Status `json:"queryResult"`
			}
			if json.Unmarshal([]byte(out), &resp) == nil && len(resp.QueryResult) == 1 && testsuite.Halted(seq)(resp.QueryResult[0]) {
				return resp.QueryResult[0]
			}
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("%s never halted (halt %d): %v", id, seq, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readmeAttribute is the search attribute the README's list query reads.
const readmeAttribute = "LoopGuardState"

// shellWords splits the guard's copy-pastable commands: words separated by
// spaces, single-quoted words kept whole (all they use).
func shellWords(s string) []string {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'')
			words = append(words, s[1:end+1])
			s = s[end+2:]
			continue
		}
		end := strings.IndexByte(s, ' ')
		if end < 0 {
			end = len(s)
		}
		words = append(words, s[:end])
		s = s[end:]
	}
	return words
}

func TestCLI(t *testing.T) {
	bin := temporalCLI(t)
	// LoopGuardState registered, for the README's list query.
	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true,
		SearchAttributes: map[string]enumspb.IndexedValueType{readmeAttribute: enumspb.INDEXED_VALUE_TYPE_KEYWORD}})
	c, err := srv.NewClient(client.Options{Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	// No deadline of its own (a loaded machine is slow, not wrong): go
	// test's -timeout, less a minute so that a stuck step fails by its name.
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-time.Minute))
	}
	defer cancel()

	// The CLI's answers, not the ladder: each loop halts at its first trip.
	guard := workflows.GuardOptions()
	guard.Warnings = 0
	guard.SearchAttribute = readmeAttribute
	testsuite.StartWorker(t, c, workflows.TaskQueue, testsuite.WorkerOptions{Guard: &guard, Register: workflows.Register})
	sh := cli{t: t, bin: bin, addr: srv.FrontendHostPort(), ns: srv.Namespace()}
	startLoop := func(id, scenario string, maxTurns int) client.WorkflowRun {
		t.Helper()
		in := workflows.LoopInput{Scenario: scenario, MaxTurns: maxTurns}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue}, workflows.CoderVerifierLoop, in)
		require.NoError(t, err)
		return run
	}
	loopResult := func(run client.WorkflowRun) workflows.LoopResult {
		t.Helper()
		var res workflows.LoopResult
		require.NoError(t, run.Get(ctx, &res))
		return res
	}

	t.Run("resume with a signal", func(t *testing.T) {
		sh.t = t
		run := startLoop("cli-resume", activities.ScenarioIdenticalPatch, 3)
		s := sh.waitHalted(ctx, "cli-resume", 1)
		assert.Equal(t, protocol.ReasonStalled, s.Halt.HaltReason)
		assert.Equal(t, workflows.NodeCode, s.Halt.Node)
		sh.mustRun(ctx, "workflow", "signal", "--workflow-id", "cli-resume", "--name", "resume", "--input", `{"reason":"reviewed the evidence","by":"cli"}`)
		res := loopResult(run)
		assert.Equal(t, workflows.OutcomeGaveUp, res.Outcome, "resumed, the 3-turn loop ran out of turns")
		after := sh.status(ctx, "cli-resume")
		assert.Equal(t, protocol.StateRunning, after.State)
		require.NotNil(t, after.LastDecision)
		assert.Equal(t, protocol.Decision{Action: "resume", Reason: "reviewed the evidence", By: "cli", HaltSeq: 1}, *after.LastDecision)
	})

	t.Run("escalate with a signal", func(t *testing.T) {
		sh.t = t
		run := startLoop("cli-escalate", activities.ScenarioOscillating, 0)
		s := sh.waitHalted(ctx, "cli-escalate", 1)
		assert.Equal(t, protocol.ReasonOscillating, s.Halt.HaltReason)
		sh.mustRun(ctx, "workflow", "signal", "--workflow-id", "cli-escalate", "--name", "escalate", "--input", `{"reason":"patches keep flipping","by":"cli"}`)
		res := loopResult(run)
		assert.Equal(t, workflows.OutcomeEscalated, res.Outcome)
		require.NotNil(t, res.Escalation)
		assert.Equal(t, "patches keep flipping", res.Escalation.Reason)
		assert.Equal(t, protocol.StateEscalated, sh.status(ctx, "cli-escalate").State)
	})

	t.Run("bad input is refused", func(t *testing.T) {
		sh.t = t
		run := startLoop("cli-bad", activities.ScenarioRepeatedError, 0)
		before := sh.waitHalted(ctx, "cli-bad", 1)
		assert.Equal(t, protocol.ReasonRepeatedError, before.Halt.HaltReason)

		sh.mustRun(ctx, "workflow", "signal", "--workflow-id", "cli-bad", "--name", "resume", "--input", `{"reason":"typo","extend":{"maxTurns":2}}`)
		var s protocol.Status
		for s = sh.status(ctx, "cli-bad"); s.LastRejected == nil; s = sh.status(ctx, "cli-bad") {
			time.Sleep(100 * time.Millisecond)
		}
		assert.Contains(t, s.LastRejected.Reason, `unknown field "maxTurns"`)
		assert.Equal(t, before.Halt, s.Halt, "still paused on the same halt")

		out, err := sh.run(ctx, "workflow", "update", "execute", "--workflow-id", "cli-bad", "--name", "resume", "--input", `{"reason":42}`)
		require.Error(t, err, "a malformed update fails the command")
		assert.Contains(t, out, "malformed JSON")

		// A bare string is the reason, as a human typing it means.
		out = sh.mustRun(ctx, "workflow", "update", "execute", "--workflow-id", "cli-bad", "--name", "escalate", "--input", `"sandbox is down"`)
		assert.Contains(t, out, "escalate")
		res := loopResult(run)
		assert.Equal(t, workflows.OutcomeEscalated, res.Outcome)
		assert.Equal(t, "sandbox is down", res.Escalation.Reason)
	})

	t.Run("the guard's own operator commands", func(t *testing.T) {
		sh.t = t
		run := startLoop("cli-commands", activities.ScenarioIdenticalPatch, 0)
		sh.waitHalted(ctx, "cli-commands", 1)
		cmds := interceptor.OperatorCommands(srv.Namespace(), "cli-commands")
		for _, line := range []string{cmds.Status, cmds.ResumeUpdate} {
			if line == "" {
				continue
			}
			words := shellWords(line)
			require.Equal(t, "temporal", words[0], line)
			sh.mustRun(ctx, words[1:]...)
		}
		if cmds.ResumeUpdate == "" {
			words := shellWords(cmds.Resume)
			sh.mustRun(ctx, words[1:]...)
		}
		sh.waitHalted(ctx, "cli-commands", 2) // identical-patch stalls again
		words := shellWords(cmds.Escalate)
		sh.mustRun(ctx, words[1:]...)
		res := loopResult(run)
		assert.Equal(t, workflows.OutcomeEscalated, res.Outcome)
	})

	t.Run("the README's commands, as written", func(t *testing.T) {
		sh.t = t
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
		require.NoError(t, err)
		lines := regexp.MustCompile(`(?m)^temporal workflow .+$`).FindAllString(string(data), -1)
		require.GreaterOrEqual(t, len(lines), 4, "the README's answers with the temporal CLI")
		for i, line := range lines {
			words := shellWords(line)[1:]
			id := fmt.Sprintf("cli-readme-%d", i)
			for k := range words {
				if k > 0 && words[k-1] == "--workflow-id" {
					words[k] = id
				}
			}
			// Each on a fresh halted run; the list lists the last.
			if !slices.Contains(words, "--workflow-id") {
				id = fmt.Sprintf("cli-readme-%d", i-1)
				require.Eventually(t, func() bool {
					out, err := sh.run(ctx, words...)
					return err == nil && strings.Contains(out, id)
				}, 30*time.Second, 200*time.Millisecond, "%s does not list %s", line, id)
				continue
			}
			startLoop(id, activities.ScenarioIdenticalPatch, 0)
			sh.waitHalted(ctx, id, 1)
			sh.mustRun(ctx, words...)
		}
	})

	t.Run("replay a history exported by the CLI", func(t *testing.T) {
		sh.t = t
		out := sh.mustRun(ctx, "workflow", "show", "--workflow-id", "cli-resume", "--output", "json")
		path := filepath.Join(t.TempDir(), "cli-resume.json")
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
		testsuite.RequireReplayFile(t, path, testsuite.ReplayOptions{Guard: workflows.GuardOptions(), Workflows: []any{workflows.CoderVerifierLoop}})
		h, err := testsuite.ReadHistoryFile(path)
		require.NoError(t, err)
		info := testsuite.Inspect(h)
		assert.True(t, info.Guarded)
		assert.Equal(t, 1, info.HaltedSignals)
		assert.Zero(t, info.WorkflowTaskFailures)
		fmt.Println("replayed", path, "exported by temporal workflow show")
	})
}

// TestDocsStateTheCLIBuildLimits: what docs/getting-started.md says of the
// CLI's build is what .ci/run and this test do (it once said a 40-minute
// build fitted the 30-minute -timeout).
func TestDocsStateTheCLIBuildLimits(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", p))
		require.NoError(t, err)
		return strings.Join(strings.Fields(string(b)), " ")
	}
	doc, ci := read("docs/getting-started.md"), read(".ci/run")
	minutes := func(d time.Duration) string { return strconv.Itoa(int(d / time.Minute)) }
	ciLimit := regexp.MustCompile(`timeout (\d+)m go install`).FindStringSubmatch(ci)
	require.NotNil(t, ciLimit, ".ci/run bounds the CLI's build")
	assert.Contains(t, doc, "before the tests, giving it "+ciLimit[1]+" minutes", ".ci/run's limit")
	assert.Contains(t, doc, "giving it at most "+minutes(buildTimeout)+" minutes and leaving the test "+minutes(testNeeds), "this test's limits")
	assert.Contains(t, doc, "`temporal --version` says "+strings.TrimPrefix(cliVersion, "v"), "the stamped version")
	assert.Contains(t, ci, cliLdflags()[:strings.Index(cliLdflags(), "=")], ".ci/run stamps the version as this test does")
}
