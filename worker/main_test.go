package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/workflows"
)

// mainArgsEnv makes the test binary run main() with the JSON-encoded
// arguments instead of the tests, so that tests can check main's exit
// status and stderr.
const mainArgsEnv = "LOOPGUARD_WORKER_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		var a []string
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			panic(err)
		}
		os.Args = append([]string{progName}, a...)
		main()
		return
	}
	os.Exit(m.Run())
}

// runMain runs main() in a child process with args and extra environment.
func runMain(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx := testContext(t, 30*time.Second)
	a, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(append(os.Environ(), mainArgsEnv+"="+string(a)), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errb.String()
}

func TestMainExitStatus(t *testing.T) {
	isolateEnv(t)
	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		stderr string
	}{
		{"unknown flag", nil, []string{"--bogus"}, 2, "loopguard-worker: flag provided but not defined: -bogus\n"},
		{"bad flag value", nil, []string{"--port", "x"}, 2, `loopguard-worker: invalid value "x" for flag -port: parse error` + "\n"},
		{"unreachable server", []string{"TEMPORAL_ADDRESS=127.0.0.1:1"}, nil, 1, "loopguard-worker: dial temporal at 127.0.0.1:1: connection refused\n"},
		{"bad policy", nil, []string{"--policy", filepath.Join("testdata", "missing.json")}, 2, "loopguard-worker: policy file testdata/missing.json: no such file or directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.env, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.stderr, stderr, "one line, no stack trace, no log dump")
			assert.Empty(t, stdout)
		})
	}
	code, stdout, stderr := runMain(t, nil, "--help")
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "-demo-exit")
	assert.Contains(t, stdout, "TEMPORAL_ADDRESS")
	assert.Contains(t, stdout, "Which server (the first that is set decides", "--help says which setting wins")
	assert.Contains(t, stdout, "a flag wins\nover a TEMPORAL_* variable, which wins over the profile in the config file")
}

// isolateEnv clears the Temporal client environment for the test, so that
// neither the machine's variables nor its temporal.toml interfere.
func isolateEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TEMPORAL_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	// The temporal CLI's default config file lives under the user config
	// directory: point it at an empty one, so that a developer's own
	// default profile does not send the tests to their server.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func TestExitCode(t *testing.T) {
	var buf bytes.Buffer
	assert.Equal(t, 0, exitCode(nil, &buf))
	assert.Empty(t, buf.String())

	assert.Equal(t, 2, exitCode(usagef("--x: bad"), &buf))
	assert.Equal(t, "loopguard-worker: --x: bad\n", buf.String())

	buf.Reset()
	assert.Equal(t, 1, exitCode(errors.Join(errors.New("first"), errors.New("second\n  detail")), &buf))
	assert.Equal(t, "loopguard-worker: first; second; detail\n", buf.String())
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, noEnv)
	require.NoError(t, err)
	assert.False(t, cfg.remote)
	assert.Equal(t, "loopguard-data", cfg.dataDir)
	assert.Equal(t, 7233, cfg.port)
	assert.Equal(t, 8233, cfg.uiPort)
	assert.Equal(t, workflows.TaskQueue, cfg.taskQueue)
	assert.Equal(t, "loopguard-supervisor", cfg.supervisorID)
	assert.Equal(t, 2*time.Minute, cfg.demoTimeout)

	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cfg, err = parseFlags([]string{"--namespace", "agents"}, env(map[string]string{"TEMPORAL_ADDRESS": "temporal:7233"}))
	require.NoError(t, err)
	assert.True(t, cfg.remote)
	assert.Equal(t, "agents", cfg.namespace)

	cfg, err = parseFlags([]string{"--ephemeral"}, env(map[string]string{"TEMPORAL_NAMESPACE": "dev"}))
	require.NoError(t, err)
	assert.False(t, cfg.remote)
	assert.Empty(t, cfg.dataDir)
	assert.Equal(t, "dev", cfg.namespace)

	_, err = parseFlags([]string{"-h"}, noEnv)
	assert.ErrorIs(t, err, flag.ErrHelp)

	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--nope"}, nil, "flag provided but not defined: -nope"},
		{[]string{"extra"}, nil, `unexpected argument "extra"`},
		{[]string{"--port", "70000"}, nil, "--port must be between 0 and 65535"},
		{[]string{"--ephemeral", "--data-dir", "x"}, nil, "--data-dir and --ephemeral exclude each other"},
		{[]string{"--ephemeral"}, map[string]string{"TEMPORAL_ADDRESS": "t:7233"}, "--ephemeral applies to the embedded server only"},
		{[]string{"--address", "t:7233", "--ui-port", "9000"}, nil, "--ui-port applies to the embedded server only"},
		{[]string{"--on-halt", "stop"}, nil, `--on-halt: "stop" is not one of pause, fail, observe`},
		{[]string{"--log-level", "loud"}, nil, `invalid value "loud" for flag -log-level`},
		{[]string{"--log-format", "xml"}, nil, `--log-format: "xml" is not one of console, json`},
		{[]string{"--demo-exit"}, nil, "--demo-exit needs --demo"},
		{[]string{"--demo", "--demo-timeout", "0s"}, nil, "--demo-timeout must be positive"},
		{[]string{"--pause-timeout", "-1m"}, nil, "--pause-timeout must not be negative"},
		{[]string{"--server-log-level", "chatty"}, nil, `--server-log-level: "chatty" is not one of`},
		{[]string{"--search-attribute", ""}, nil, "is not a search attribute name"},
		{[]string{"--ui-url", "localhost:8233"}, nil, "--ui-url must start with http://"},
		{[]string{"--task-queue", " "}, nil, "--task-queue must not be empty"},
		{[]string{"--metrics-addr", "9464"}, nil, `--metrics-addr: "9464" is not HOST:PORT`},
	} {
		_, err := parseFlags(tc.args, env(tc.env))
		var ue *usageError
		if assert.ErrorAs(t, err, &ue, "%v", tc.args) {
			assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
		}
	}
}

// TestRunBadInput: run rejects bad flags and policy files before it
// starts or dials anything.
func TestRunBadInput(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--frobnicate"}, "flag provided but not defined: -frobnicate"},
		{"unknown policy field", []string{"--policy", write("typo.json", `{"maxCycleIteration": 4}`)},
			`typo.json: unknown field "maxCycleIteration" (did you mean "maxCycleIterations"?)`},
		{"unknown node field", []string{"--policy", write("node.json", `{"nodes": {"Verify": {"metricFeild": "failing"}}}`)},
			`node.json: nodes.Verify: unknown field "metricFeild" (did you mean "metricField"?)`},
		{"negative threshold", []string{"--policy", write("neg.json", `{"maxCycleIterations": -1}`)},
			"neg.json: maxCycleIterations: must not be negative, got -1"},
		{"negative node threshold", []string{"--policy", write("negnode.json", `{"nodes": {"Code": {"maxCalls": -2}}}`)},
			"negnode.json: nodes.Code.maxCalls: must not be negative, got -2"},
		{"window too small", []string{"--policy", write("window.json", `{"window": 2}`)},
			"window.json: window: 2 is smaller than"},
		{"bad duration", []string{"--policy", write("dur.json", `{"maxNodeRuntime": "10 minutes"}`)},
			`dur.json: maxNodeRuntime: "10 minutes" is not a duration`},
		{"number duration", []string{"--policy", write("numdur.json", `{"pauseTimeout": 600}`)},
			`numdur.json: pauseTimeout: want a duration string`},
		{"wrong type", []string{"--policy", write("type.json", `{"repeatThreshold": "3"}`)},
			`type.json: repeatThreshold: want an integer, got "3"`},
		{"bad onHalt", []string{"--policy", write("onhalt.json", `{"onHalt": "explode"}`)},
			`onhalt.json: onHalt: unknown action "explode"`},
		{"bad graph edge", []string{"--policy", write("graph.json", `{"graph": [{"from": "Code"}]}`)},
			`graph.json: graph[0]: edge needs both From and To`},
		{"syntax error", []string{"--policy", write("syntax.json", "{\n  \"window\": 8,\n}")},
			"syntax.json: invalid JSON at line 3, column 1"},
		{"not an object", []string{"--policy", write("array.json", `[1]`)},
			"array.json: want a JSON object, got an array"},
		{"worker-owned field", []string{"--policy", write("sa.json", `{"searchAttribute": "Mine"}`)},
			"sa.json: searchAttribute: the worker sets it: use --search-attribute"},
		{"protocol name", []string{"--policy", write("names.json", `{"resumeSignal": "go-on"}`)},
			"names.json: resumeSignal: the worker keeps the default name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(ctx, tc.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			// Nothing started: no banner on stdout (asserted below), no
			// server. (No wall-clock bound: a loaded machine is slow.)
			var line bytes.Buffer
			assert.Equal(t, 2, exitCode(err, &line))
			assert.Equal(t, 1, strings.Count(line.String(), "\n"), line.String())
			assert.Empty(t, stdout.String())
			assert.Empty(t, stderr.String())
		})
	}
}

// TestRunUnreachableServer: an external server that does not answer is
// one clear error, within the connect timeout (the test's own context is
// only a guard against a hang).
func TestRunUnreachableServer(t *testing.T) {
	isolateEnv(t)
	ctx := testContext(t, 20*time.Second)

	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	err := run(ctx, nil, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, "dial temporal at 127.0.0.1:1: connection refused", err.Error())
	var line bytes.Buffer
	assert.Equal(t, 1, exitCode(err, &line))
	assert.Equal(t, "loopguard-worker: dial temporal at 127.0.0.1:1: connection refused\n", line.String())
	assert.Empty(t, stdout.String())

	// A server that accepts connections but never answers: the connect
	// timeout.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	err = run(ctx, []string{"--address", l.Addr().String(), "--connect-timeout", "1s"}, &stdout, &stderr)
	require.EqualError(t, err, "dial temporal at "+l.Addr().String()+": no answer within 1s (--connect-timeout)", "the connect timeout ended the wait, not the test's context")

	// --address wins over the environment.
	err = run(ctx, []string{"--address", "127.0.0.1:2", "--connect-timeout", "3s"}, &stdout, &stderr)
	require.EqualError(t, err, "dial temporal at 127.0.0.1:2: connection refused")
}

func TestGuardOptionsFromPolicyFile(t *testing.T) {
	cfg, err := parseFlags([]string{"--policy", filepath.Join("testdata", "policy.json")}, noEnv)
	require.NoError(t, err)
	o, err := guardOptions(cfg)
	require.NoError(t, err)

	base := workflows.GuardOptions()
	assert.Equal(t, 6, o.MaxCycleIterations)
	assert.Equal(t, 10*time.Minute, o.MaxNodeRuntime)
	assert.Equal(t, 90*time.Minute, o.MaxCycleRuntime)
	assert.Equal(t, 50000.0, o.MaxCost)
	assert.Equal(t, 24*time.Hour, o.PauseTimeout)
	assert.Equal(t, protocol.OnHaltPause, o.OnHalt)
	assert.Equal(t, interceptor.TimeoutEscalate, o.OnPauseTimeout)
	assert.Equal(t, []string{"generatedAt", "requestId"}, o.IgnoreFields)
	assert.Equal(t, []interceptor.Edge{{From: "Code", To: "Verify"}, {From: "Verify", To: "Code"}}, o.Graph)
	assert.Zero(t, o.MaxCallsPerNode, "absent fields keep the samples' value")

	// Nodes are merged field by field into the samples' node options.
	verify := base.Nodes[workflows.NodeVerify]
	verify.MaxCalls = 12
	assert.Equal(t, verify, o.Nodes[workflows.NodeVerify])
	assert.Equal(t, interceptor.NodeOptions{Exempt: true}, o.Nodes["Search"])
	assert.Equal(t, base.Nodes[workflows.NodeCode], o.Nodes[workflows.NodeCode])
	assert.Len(t, o.Nodes, len(base.Nodes)+1)
	assert.Len(t, base.Nodes, len(workflows.GuardOptions().Nodes), "the samples' options are not modified")

	// Flags win over the file.
	cfg, err = parseFlags([]string{"--policy", filepath.Join("testdata", "policy.json"), "--on-halt", "observe", "--pause-timeout", "5m"}, noEnv)
	require.NoError(t, err)
	o, err = guardOptions(cfg)
	require.NoError(t, err)
	assert.Equal(t, protocol.OnHaltObserve, o.OnHalt)
	assert.Equal(t, 5*time.Minute, o.PauseTimeout)

	// Without a policy file: the samples' options.
	cfg, err = parseFlags(nil, noEnv)
	require.NoError(t, err)
	o, err = guardOptions(cfg)
	require.NoError(t, err)
	assert.Equal(t, workflows.GuardOptions(), o)
}

func TestSDKLogger(t *testing.T) {
	var buf syncBuffer
	l := newSDKLogger(newLogger(&buf, zap.NewAtomicLevelAt(zapcore.DebugLevel), "json"))
	l.With("workflow", "wf-1").Info("hello", "n", 3)
	l.WithCallerSkip(1).Warn("careful")
	l.Debug("details")
	l.Error("broken", "error", errors.New("boom"))
	var lines []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &m), s)
		lines = append(lines, m)
	}
	require.Len(t, lines, 4)
	assert.Equal(t, "hello", lines[0]["msg"])
	assert.Equal(t, "info", lines[0]["level"])
	assert.Equal(t, "wf-1", lines[0]["workflow"])
	assert.Equal(t, 3.0, lines[0]["n"])
	assert.Equal(t, "warn", lines[1]["level"])
	assert.Equal(t, "debug", lines[2]["level"])
	assert.Equal(t, "boom", lines[3]["error"])
	assert.NotContains(t, buf.String(), "stacktrace")
}

func TestDemoTableMarksMismatches(t *testing.T) {
	scs := workflows.Scenarios()
	halt := &protocol.HaltEvent{HaltReason: protocol.ReasonStalled, Detector: "identical_output", Node: "Code",
		Message: "Code returned the same output 3 times in a row", Iteration: 3, MaxIterations: 8}
	results := []*demoResult{
		{Scenario: scs[0], WorkflowID: "demo-converging-x", Outcome: outcomeCompleted, Result: &workflows.LoopResult{Outcome: "completed", Iterations: 4}},
		{Scenario: scs[1], WorkflowID: "demo-identical-patch-x", Outcome: outcomeHalted, Halt: halt},
		{Scenario: scs[2], WorkflowID: "demo-same-failing-tests-x", Outcome: outcomeGaveUp, Result: &workflows.LoopResult{Outcome: "gave_up", Iterations: 20}},
		{Scenario: scs[3], WorkflowID: "demo-oscillating-x", Outcome: outcomeHalted, Halt: halt},
		{Scenario: scs[4], WorkflowID: "demo-repeated-error-x", Outcome: outcomeRunning},
	}
	var out bytes.Buffer
	d := &demo{namespace: "agents", address: "127.0.0.1:7233", embedded: true, uiURL: "http://127.0.0.1:8233", out: &out}
	d.printTable(results)
	text := out.String()
	t.Log("\n" + text)
	lines := strings.Split(text, "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix+" ") {
				return l
			}
		}
		t.Fatalf("no row for %s", prefix)
		return ""
	}
	assert.Regexp(t, `^converging\s+demo-converging-x\s+completed\s+4\s+ok$`, row("converging"))
	assert.Regexp(t, `^identical-patch\s+demo-identical-patch-x\s+halted: stalled\s+loop 3/8\s+ok$`, row("identical-patch"))
	assert.Regexp(t, `^same-failing-tests\s+\S+\s+gave up \(no halt\)\s+20\s+MISMATCH: want halted: stalled$`, row("same-failing-tests"))
	assert.Regexp(t, `^oscillating\s+\S+\s+halted: stalled\s+loop 3/8\s+MISMATCH: want halted: oscillating$`, row("oscillating"))
	assert.Regexp(t, `^repeated-error\s+\S+\s+still running\s+-\s+MISMATCH: want halted: repeated_error$`, row("repeated-error"))
	assert.Contains(t, text, "MISMATCH: 3 of 5 scenarios did not end as expected: same-failing-tests, oscillating, repeated-error")
	assert.Contains(t, text, "    resume    temporal workflow signal --namespace agents --workflow-id demo-identical-patch-x --name resume")
	assert.Contains(t, text, "    UI        http://127.0.0.1:8233/namespaces/agents/workflows/demo-identical-patch-x\n")
	assert.NotContains(t, text, "--address", "the temporal CLI's default address reaches 127.0.0.1:7233")
	assert.Equal(t, 3, countMismatches(results))

	// On another port, the commands name the address.
	d.address = "127.0.0.1:40000"
	c := d.commands("wf")
	assert.True(t, strings.HasPrefix(c.Resume, "temporal workflow signal --address 127.0.0.1:40000 --namespace agents --workflow-id wf "), c.Resume)
	assert.True(t, strings.HasPrefix(c.TctlEscalate, "tctl --address 127.0.0.1:40000 --namespace agents workflow signal "), c.TctlEscalate)
	assert.True(t, strings.HasPrefix(c.ResumeUpdate, "temporal workflow update execute --address 127.0.0.1:40000 "), c.ResumeUpdate)
	d.embedded = false
	assert.NotContains(t, d.commands("wf").Resume, "--address", "an external server's address comes from TEMPORAL_ADDRESS")
}

func TestRunPortInUse(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"--ephemeral", "--port", strconv.Itoa(port), "--ui-port", "0"}, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, "start the embedded Temporal server: "+l.Addr().String()+" (--port) is already in use "+
		"(another Temporal server running? choose free ports with --port 0 --ui-port 0, or point TEMPORAL_ADDRESS at the running server)", err.Error())
	assert.Equal(t, 1, exitCode(err, io.Discard))
}

// TestDemoProgressOnTerminal: on a terminal the progress line is rewritten
// in place.
func TestDemoProgressOnTerminal(t *testing.T) {
	scs := workflows.Scenarios()
	results := []*demoResult{
		{Scenario: scs[0], Outcome: outcomeCompleted},
		{Scenario: scs[1], Outcome: outcomeHalted},
	}
	var out bytes.Buffer
	d := &demo{out: &out, tty: true, timeout: time.Second}
	require.NoError(t, d.wait(testContext(t, 5*time.Second), results))
	assert.Equal(t, "\r\033[Kwaiting: 2/2 settled (1 halted)\n", out.String())

	out.Reset()
	d.tty = false
	require.NoError(t, d.wait(testContext(t, 5*time.Second), results))
	assert.Equal(t, "waiting: 2/2 settled (1 halted)\n", out.String())
}

// TestGettingStartedShowsTheBanner: the demo's banner in
// docs/getting-started.md is what the worker prints (it once said the
// supervisor's query listed the halted workflows; it is a log of halts).
func TestGettingStartedShowsTheBanner(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "getting-started.md"))
	require.NoError(t, err)
	cfg := config{taskQueue: workflows.TaskQueue, supervisorID: defaultSupervisorID}
	var out bytes.Buffer
	printBanner(&out, cfg, &backend{namespace: "default", searchAttribute: defaultSearchAttribute}, nil)
	checked := 0
	for _, l := range strings.Split(out.String(), "\n") {
		for _, field := range []string{"  namespace ", "  task queue ", "  supervisor ", "  search attribute "} {
			if strings.HasPrefix(l, field) {
				checked++
				assert.Contains(t, string(doc), l+"\n", "docs/getting-started.md's banner")
			}
		}
	}
	assert.Equal(t, 4, checked, "banner lines checked")
}
