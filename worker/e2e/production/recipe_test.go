// Package production runs the deployment recipe of docs/operations.md
// without Docker: Temporal on PostgreSQL, two loopguard workers, and
// Prometheus with deploy/prometheus's rules, all on loopback ports, with
// their data in temporary directories.
//
// TestProductionRecipe installs nothing: it finds PostgreSQL and Prometheus
// (Debian's packages postgresql and prometheus; .ci/run installs them) and
// builds the Temporal server, temporal-sql-tool and the temporal CLI into
// the user cache directory on first use (TestProductionTools does only
// that: .ci/run runs it first, with a timeout that fits a cold build). It
// skips, saying what is missing, where a program cannot be had, and fails
// instead when LOOPGUARD_REQUIRE_PRODUCTION_E2E is set.
package production

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

const (
	namespace = "default"
	// runReserve is the time the recipe needs once the programs are
	// built; the builds get what the test's deadline leaves beyond it.
	runReserve = 6 * time.Minute
	// runTimeout bounds the recipe itself.
	runTimeout = 12 * time.Minute
	dbPassword = "temporal"
)

// The test's thresholds for deploy/prometheus/loopguard-rules.yml, which
// it loads unchanged: this file takes the place of
// loopguard-thresholds.yml, as a platform team's own would.
const testThresholds = `groups:
  - name: loopguard-thresholds
    rules:
      - record: loopguard:paused_too_long_threshold_seconds
        expr: vector(10)
      - record: loopguard:halt_rate_spike_factor
        expr: vector(3)
      - record: loopguard:halt_rate_spike_min_halts
        expr: vector(3)
      - record: loopguard:halts_per_call:baseline_default_ratio
        expr: vector(0.01)
`

// alertRule finds the alerts in a rules file.
var alertRule = regexp.MustCompile(`(?m)^\s*-\s*alert:\s*(\S+)\s*$`)

// buildBudget is how long the builds may take: what the test's deadline
// leaves beyond reserve.
func buildBudget(t *testing.T, reserve time.Duration) time.Duration {
	if d, ok := t.Deadline(); ok {
		return time.Until(d) - reserve
	}
	return time.Hour
}

// TestProductionTools finds PostgreSQL and Prometheus and builds the
// Temporal server, temporal-sql-tool and the temporal CLI into the cache,
// as the recipe does, without running anything: the warm-up .ci/run runs
// with a timeout that fits a cold build.
func TestProductionTools(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP production recipe: -short")
	}
	start := time.Now()
	tl := findTools(t, buildBudget(t, 30*time.Second), false)
	t.Logf("programs ready in %s: %+v", time.Since(start).Round(time.Second), tl)
}

// steps times the recipe's steps and logs them at the end.
type steps struct {
	t     *testing.T
	names []string
	took  []time.Duration
}

func newSteps(t *testing.T) *steps {
	s := &steps{t: t}
	t.Cleanup(func() {
		if len(s.names) == 0 {
			return
		}
		var b strings.Builder
		var total time.Duration
		for i, n := range s.names {
			fmt.Fprintf(&b, "\n  %-62s %7.1fs", n, s.took[i].Seconds())
			total += s.took[i]
		}
		t.Logf("step timings:%s\n  %-62s %7.1fs", b.String(), "total", total.Seconds())
	})
	return s
}

// step starts timing name; the returned func ends it.
func (s *steps) step(name string) func() {
	start := time.Now()
	s.t.Logf("step: %s", name)
	return func() {
		s.names = append(s.names, name)
		s.took = append(s.took, time.Since(start))
	}
}

func TestProductionRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP production recipe: -short (it starts PostgreSQL, Temporal, Prometheus and two workers)")
	}
	root := filepath.Dir(workerModuleDir(t))
	st := newSteps(t)

	done := st.step("find PostgreSQL and Prometheus; build server, sql tool, CLI (cached), worker")
	tl := findTools(t, buildBudget(t, runReserve), true)
	done()

	// The recipe's own deadline leaves the cleanups time to stop everything
	// before go test's.
	timeout := runTimeout
	if d, ok := t.Deadline(); ok {
		timeout = min(timeout, time.Until(d)-time.Minute)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	// PostgreSQL: a cluster of its own in a temporary directory (a person
	// uses the packaged service instead), with the password the recipe's
	// scripts and server config are given.
	done = st.step("PostgreSQL: initdb and start")
	pgPort := freePorts(t, 1)[0]
	pgDir, cred := postgresDir(t)
	pwFile := filepath.Join(pgDir, "pwfile")
	require.NoError(t, os.WriteFile(pwFile, []byte(dbPassword+"\n"), 0o600))
	chown(t, pwFile, cred)
	data := filepath.Join(pgDir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(tl.pgBin, "initdb"), "-D", data, "-U", "temporal", "--pwfile", pwFile,
		"--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync")
	initdb.Dir = pgDir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := initdb.CombinedOutput()
	require.NoError(t, err, "initdb:\n%s", out)
	pg := startProcess(t, "postgres", processSpec{
		bin: filepath.Join(tl.pgBin, "postgres"),
		// fsync off: the test's data is thrown away, and the machine is shared.
		args:       []string{"-D", data, "-p", strconv.Itoa(pgPort), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + pgDir, "-c", "fsync=off"},
		dir:        pgDir,
		stopSignal: syscall.SIGINT, // fast shutdown
		cred:       cred,
	})
	waitFor(t, ctx, pg, 200*time.Millisecond, "PostgreSQL listens", func() (bool, error) { return dialable(hostPort(pgPort)) })
	done()

	done = st.step("schema: deploy/temporal/scripts/setup-schema.sh (twice: it must be safe to re-run)")
	schemaEnv := []string{
		"POSTGRES_SEEDS=127.0.0.1", "DB_PORT=" + strconv.Itoa(pgPort), "POSTGRES_USER=temporal", "SQL_PASSWORD=" + dbPassword,
		"TEMPORAL_SQL_TOOL=" + tl.sqlTool, "TEMPORAL_SCHEMA_DIR=" + tl.schemaDir,
	}
	for range 2 {
		out := runScript(t, ctx, root, "setup-schema.sh", schemaEnv)
		assert.Contains(t, out, "database temporal ready")
		assert.Contains(t, out, "database temporal_visibility ready")
		assert.Contains(t, out, "schema ready")
	}
	done()

	done = st.step("Temporal server: deploy/temporal/config/server.yaml, frontend answers")
	sp := lowFreePorts(t, 10)
	frontend := hostPort(sp[0])
	serverMetrics := hostPort(sp[9])
	server := startProcess(t, "temporal-server", processSpec{
		bin:  tl.server,
		args: []string{"--config-file", filepath.Join(root, "deploy", "temporal", "config", "server.yaml"), "--allow-no-auth", "start"},
		dir:  root, // the config's relative dynamic config path
		env: []string{
			"POSTGRES_SEEDS=127.0.0.1", "DB_PORT=" + strconv.Itoa(pgPort), "POSTGRES_USER=temporal", "POSTGRES_PWD=" + dbPassword,
			"BIND_ON_IP=127.0.0.1",
			"FRONTEND_GRPC_PORT=" + strconv.Itoa(sp[0]), "FRONTEND_HTTP_PORT=" + strconv.Itoa(sp[1]), "FRONTEND_MEMBERSHIP_PORT=" + strconv.Itoa(sp[2]),
			"MATCHING_GRPC_PORT=" + strconv.Itoa(sp[3]), "MATCHING_MEMBERSHIP_PORT=" + strconv.Itoa(sp[4]),
			"HISTORY_GRPC_PORT=" + strconv.Itoa(sp[5]), "HISTORY_MEMBERSHIP_PORT=" + strconv.Itoa(sp[6]),
			"WORKER_GRPC_PORT=" + strconv.Itoa(sp[7]), "WORKER_MEMBERSHIP_PORT=" + strconv.Itoa(sp[8]),
			"PROMETHEUS_ENDPOINT=" + serverMetrics,
		},
	})
	waitFor(t, ctx, server, 250*time.Millisecond, "the frontend listens", func() (bool, error) { return dialable(frontend) })
	done()

	done = st.step("namespace and search attributes: deploy/temporal/scripts/setup-namespace.sh")
	cliHome := t.TempDir()
	out = []byte(runScript(t, ctx, root, "setup-namespace.sh", []string{
		"TEMPORAL_ADDRESS=" + frontend, "TEMPORAL_NAMESPACE=" + namespace, "TEMPORAL_CLI=" + tl.cli,
		"HOME=" + cliHome, "XDG_CONFIG_HOME=" + cliHome,
	}))
	t.Logf("setup-namespace.sh:\n%s", out)
	c, err := client.Dial(client.Options{HostPort: frontend, Namespace: namespace, Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	sas, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	require.NoError(t, err)
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, sas.GetCustomAttributes()["LoopGuardState"])
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_DATETIME, sas.GetCustomAttributes()["LoopGuardPausedSince"])
	done()

	// Prometheus runs deploy/prometheus/prometheus-host.yml and
	// loopguard-rules.yml as shipped (symbolic links); the targets and the
	// thresholds are the files a platform team writes for its own.
	done = st.step("Prometheus: deploy/prometheus/prometheus-host.yml, ready")
	workerMetrics := freePorts(t, 2)
	promPort := freePorts(t, 1)[0]
	promDir := t.TempDir()
	for _, f := range []string{"prometheus-host.yml", "loopguard-rules.yml"} {
		require.NoError(t, os.Symlink(filepath.Join(root, "deploy", "prometheus", f), filepath.Join(promDir, f)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(promDir, "loopguard-thresholds.yml"), []byte(testThresholds), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(promDir, "targets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(promDir, "targets", "loopguard-worker.yml"),
		fmt.Appendf(nil, "- targets: [%q, %q]\n", hostPort(workerMetrics[0]), hostPort(workerMetrics[1])), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(promDir, "targets", "temporal.yml"),
		fmt.Appendf(nil, "- targets: [%q]\n", serverMetrics), 0o644))
	prom := startProcess(t, "prometheus", processSpec{
		bin: tl.prometheus,
		args: []string{"--config.file=" + filepath.Join(promDir, "prometheus-host.yml"), "--storage.tsdb.path=" + t.TempDir(),
			"--web.listen-address=" + hostPort(promPort)},
	})
	api := promAPI{base: "http://" + hostPort(promPort)}
	waitFor(t, ctx, prom, 250*time.Millisecond, "Prometheus is ready", func() (bool, error) { return httpOK(ctx, api.base+"/-/ready") })
	done()

	done = st.step("two workers: TEMPORAL_ADDRESS, --metrics-addr; both polling")
	// startWorker starts a worker on ns serving its metrics on metricsAddr.
	startWorker := func(name, metricsAddr, ns string) *process {
		home := t.TempDir()
		return startProcess(t, name, processSpec{
			bin:  tl.worker,
			args: []string{"--metrics-addr", metricsAddr, "--connect-timeout", "2m", "--log-format", "json"},
			env:  []string{"TEMPORAL_ADDRESS=" + frontend, "TEMPORAL_NAMESPACE=" + ns, "HOME=" + home, "XDG_CONFIG_HOME=" + home},
		})
	}
	waitWorker := func(w *process) {
		waitFor(t, ctx, w, 250*time.Millisecond, w.name+" runs", func() (bool, error) {
			return strings.Contains(w.output(), "Worker running"), nil
		})
	}
	workers := make([]*process, 2)
	for i := range workers {
		workers[i] = startWorker(fmt.Sprintf("worker-%d", i+1), hostPort(workerMetrics[i]), namespace)
	}
	for _, w := range workers {
		waitWorker(w)
		assert.Contains(t, w.output(), "search attribute LoopGuardState", "%s uses the registered search attribute", w.name)
	}
	done()

	done = st.step("Prometheus scrapes both workers and the server")
	waitFor(t, ctx, prom, time.Second, "every target up", func() (bool, error) {
		ws, err := api.targets(ctx, "loopguard-worker")
		if err != nil {
			return false, err
		}
		srv, err := api.targets(ctx, "temporal")
		if err != nil {
			return false, err
		}
		for _, addr := range []string{hostPort(workerMetrics[0]), hostPort(workerMetrics[1])} {
			if ws[addr].Health != "up" {
				return false, fmt.Errorf("worker target %s: %q %s", addr, ws[addr].Health, ws[addr].LastError)
			}
		}
		if srv[serverMetrics].Health != "up" {
			return false, fmt.Errorf("server target: %q %s", srv[serverMetrics].Health, srv[serverMetrics].LastError)
		}
		return true, nil
	})
	done()

	done = st.step("a workflow halts and pauses; visibility lists it as halted")
	const pausedID = "recipe-paused"
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: pausedID, TaskQueue: workflows.TaskQueue},
		// The samples warn once: identical-patch halts at turn 6 of 8.
		workflows.CoderVerifierLoop, workflows.LoopInput{Scenario: activities.ScenarioIdenticalPatch, MaxTurns: 8})
	require.NoError(t, err)
	s, err := testsuite.WaitStatus(ctx, c, pausedID, testsuite.Halted(1))
	require.NoError(t, err)
	assert.Equal(t, protocol.ReasonStalled, s.Halt.HaltReason)
	haltedQuery := fmt.Sprintf(`WorkflowId = %q AND %s`, pausedID, interceptor.PausedQuery("LoopGuardState"))
	waitFor(t, ctx, nil, 500*time.Millisecond, "visibility lists the paused workflow", func() (bool, error) {
		resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: haltedQuery})
		return err == nil && resp.GetCount() == 1, err
	})
	done()

	done = st.step("alert LoopGuardWorkflowPausedTooLong fires (threshold 10s)")
	var fired []string
	var firing *promAlert
	waitFor(t, ctx, prom, time.Second, "LoopGuardWorkflowPausedTooLong firing", func() (bool, error) {
		firing, err = api.alert(ctx, "LoopGuardWorkflowPausedTooLong", "firing")
		return firing != nil, err
	})
	assert.Equal(t, namespace, firing.Labels["namespace"])
	assert.Equal(t, "A loop has waited for a human for more than 10s", firing.Annotations["summary"], "the threshold comes from the test's thresholds file")
	fired = append(fired, "LoopGuardWorkflowPausedTooLong")
	done()

	done = st.step("SIGKILL the worker holding the paused workflow")
	holder := lastWorkflowTaskWorker(t, ctx, c, pausedID, workers)
	survivor := workers[1-holder]
	t.Logf("%s (pid %d) completed the workflow's last task: killing it", workers[holder].name, workers[holder].pid())
	workers[holder].kill(t)
	done()

	done = st.step("temporal workflow signal resume; it completes on the other worker")
	sh := cliRunner{t: t, bin: tl.cli, addr: frontend, ns: namespace, home: cliHome}
	sh.run(ctx, "workflow", "signal", "--workflow-id", pausedID, "--name", "resume", "--input", `{"reason":"reviewed the evidence","by":"recipe"}`)
	var res workflows.LoopResult
	require.NoError(t, run.Get(ctx, &res))
	assert.Equal(t, workflows.OutcomeGaveUp, res.Outcome, "resumed, the 8-turn loop ran out of turns")
	assert.Equal(t, survivor, workers[lastWorkflowTaskWorker(t, ctx, c, pausedID, workers)], "the other worker completed it")
	done()

	// Halts on the surviving worker. A counter series' first sample is
	// where rate() starts: Prometheus must have scraped the survivor's
	// halts counter before the burst it is to see.
	done = st.step("alert LoopGuardHaltRateSpike fires (5 halts on one worker)")
	const spikes = 5
	spikeRuns := make([]client.WorkflowRun, spikes)
	startSpike := func(i int) {
		id := fmt.Sprintf("recipe-spike-%d", i)
		spikeRuns[i], err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue},
			workflows.CoderVerifierLoop, workflows.LoopInput{Scenario: activities.ScenarioIdenticalPatch})
		require.NoError(t, err)
	}
	startSpike(0)
	_, err = testsuite.WaitStatus(ctx, c, "recipe-spike-0", testsuite.Halted(1))
	require.NoError(t, err)
	survivorHalts := fmt.Sprintf(`sum(loopguard_halts_total{instance=%q})`, hostPort(workerMetrics[1-holder]))
	waitFor(t, ctx, prom, time.Second, "Prometheus has the survivor's halts counter", func() (bool, error) {
		v, ok, err := api.scalar(ctx, survivorHalts)
		return ok && v >= 1, err
	})
	for i := 1; i < spikes; i++ {
		startSpike(i)
	}
	for i := range spikes {
		_, err := testsuite.WaitStatus(ctx, c, fmt.Sprintf("recipe-spike-%d", i), testsuite.Halted(1))
		require.NoError(t, err)
	}
	waitFor(t, ctx, prom, time.Second, "LoopGuardHaltRateSpike firing", func() (bool, error) {
		firing, err = api.alert(ctx, "LoopGuardHaltRateSpike", "firing")
		return firing != nil, err
	})
	t.Logf("LoopGuardHaltRateSpike: %s", firing.Annotations["summary"])
	fired = append(fired, "LoopGuardHaltRateSpike")
	done()

	// The killed worker comes back on its metrics port while five
	// workflows are paused, and Prometheus scrapes it again. A worker that
	// reads when each pause began from the server (issue 17, part 2; it
	// exports loopguard_search_attribute_enabled) must report a pause older
	// than itself; one that counts from when it first saw the pause starts
	// again at 0, which is only logged.
	done = st.step("restart the killed worker on its port; its oldest-pause figure")
	restartedAt := time.Now()
	restarted := startWorker(workers[holder].name+"-restarted", hostPort(workerMetrics[holder]), namespace)
	waitWorker(restarted)
	series := func(metric string, i int) string {
		return fmt.Sprintf(`max(%s{instance=%q})`, metric, hostPort(workerMetrics[i]))
	}
	var restartedOldest float64
	waitFor(t, ctx, restarted, time.Second, "Prometheus scrapes the restarted worker's oldest pause", func() (bool, error) {
		v, ok, err := api.scalar(ctx, series("loopguard_oldest_pause_seconds", holder))
		restartedOldest = v
		return ok, err
	})
	survivorOldest, _, err := api.scalar(ctx, series("loopguard_oldest_pause_seconds", 1-holder))
	require.NoError(t, err)
	t.Logf("oldest pause after a restart: the restarted worker reports %.0f s, the worker that kept running %.0f s", restartedOldest, survivorOldest)
	// The worker serves its metrics before it has listed the namespace's
	// search attributes (it retries while the server is busy), so the
	// gauge may read 0 at first scrape: it must read 1 within a minute.
	var enabled float64
	var fromServer bool
	for deadline := time.Now().Add(time.Minute); ; {
		enabled, fromServer, err = api.scalar(ctx, series("loopguard_search_attribute_enabled", holder))
		require.NoError(t, err)
		if !fromServer || enabled == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if fromServer {
		assert.Equal(t, 1.0, enabled, "the restarted worker sets its search attribute")
		rctx, rcancel := context.WithTimeout(ctx, 90*time.Second)
		waitFor(t, rctx, restarted, time.Second, "the restarted worker reports a pause older than itself", func() (bool, error) {
			v, ok, err := api.scalar(ctx, series("loopguard_oldest_pause_seconds", holder))
			restartedOldest = v
			return ok && v > time.Since(restartedAt).Seconds(), err
		})
		rcancel()
		t.Logf("the restarted worker reports %.0f s, %s after it started", restartedOldest, time.Since(restartedAt).Round(time.Second))
	}
	done()

	// A worker on a namespace without the guard's search attributes, as
	// the README's external-server example once ran: it cannot count what
	// is paused. Prometheus picks it up from the targets file without a
	// restart. Every shipped alert not seen firing yet must fire now (an
	// alert on a blind worker is one).
	done = st.step("a worker on a namespace without the search attributes; remaining alerts fire")
	const blindNS = "recipe-blind"
	blindSh := sh
	blindSh.ns = blindNS
	blindSh.run(ctx, "operator", "namespace", "create", "--retention", "24h")
	waitFor(t, ctx, nil, 500*time.Millisecond, "the new namespace answers", func() (bool, error) {
		_, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: blindNS})
		return err == nil, err
	})
	blindMetrics := hostPort(freePorts(t, 1)[0])
	require.NoError(t, os.WriteFile(filepath.Join(promDir, "targets", "loopguard-worker.yml"),
		fmt.Appendf(nil, "- targets: [%q, %q, %q]\n", hostPort(workerMetrics[0]), hostPort(workerMetrics[1]), blindMetrics), 0o644))
	blind := startWorker("worker-blind", blindMetrics, blindNS)
	waitWorker(blind)
	assert.NotContains(t, blind.output(), "search attribute LoopGuardState", "no search attribute on %s", blindNS)
	waitFor(t, ctx, blind, time.Second, "Prometheus scrapes the blind worker", func() (bool, error) {
		ws, err := api.targets(ctx, "loopguard-worker")
		return err == nil && ws[blindMetrics].Health == "up", err
	})
	for _, name := range shippedAlerts(t, root) {
		if slices.Contains(fired, name) {
			continue
		}
		actx, acancel := context.WithTimeout(ctx, 2*time.Minute)
		waitFor(t, actx, blind, time.Second, name+" firing", func() (bool, error) {
			firing, err = api.alert(ctx, name, "firing")
			return firing != nil, err
		})
		acancel()
		t.Logf("%s: %s", name, firing.Annotations["summary"])
		fired = append(fired, name)
	}
	done()

	done = st.step("escalate every halted spike by query (temporal workflow signal --query)")
	sh.run(ctx, "workflow", "signal", "--query", `WorkflowId STARTS_WITH "recipe-spike-" AND `+interceptor.PausedQuery("LoopGuardState"),
		"--name", "escalate", "--input", `{"reason":"spike reviewed","by":"recipe"}`, "--reason", "recipe", "--yes")
	for _, r := range spikeRuns {
		var res workflows.LoopResult
		require.NoError(t, r.Get(ctx, &res))
		assert.Equal(t, workflows.OutcomeEscalated, res.Outcome, r.GetID())
	}
	done()

	assert.ElementsMatch(t, shippedAlerts(t, root), fired, "every alert in deploy/prometheus is seen firing here")
}

// shippedAlerts are the alerts of deploy/prometheus/loopguard-rules.yml.
func shippedAlerts(t *testing.T, root string) []string {
	t.Helper()
	rules, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "loopguard-rules.yml"))
	require.NoError(t, err)
	var names []string
	for _, m := range alertRule.FindAllStringSubmatch(string(rules), -1) {
		names = append(names, m[1])
	}
	return names
}

// postgresDir makes PostgreSQL's directory. PostgreSQL refuses to run as
// root: then the directory belongs to, and the server runs as, the
// postgres user (Debian's package creates it), or nobody.
func postgresDir(t *testing.T) (string, *syscall.Credential) {
	t.Helper()
	if os.Geteuid() != 0 {
		return t.TempDir(), nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		unavailable(t, "running as root, and there is no postgres or nobody user to run PostgreSQL as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	dir, err := os.MkdirTemp("", "loopguard-e2e-postgres-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) }) // after the server stops (cleanups run last first)
	chown(t, dir, cred)
	return dir, cred
}

func chown(t *testing.T, path string, cred *syscall.Credential) {
	t.Helper()
	if cred != nil {
		require.NoError(t, os.Chown(path, int(cred.Uid), int(cred.Gid)))
	}
}

// lastWorkflowTaskWorker is the index in workers of the worker that
// completed the workflow's last workflow task, from the identity in its
// history (the SDK's default: pid@host@).
func lastWorkflowTaskWorker(t *testing.T, ctx context.Context, c client.Client, id string, workers []*process) int {
	t.Helper()
	identity := ""
	iter := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			identity = a.GetIdentity()
		}
	}
	pid, err := strconv.Atoi(strings.SplitN(identity, "@", 2)[0])
	require.NoError(t, err, "identity %q", identity)
	for i, w := range workers {
		if w.pid() == pid {
			return i
		}
	}
	t.Fatalf("no worker has pid %d (identity %q)", pid, identity)
	return -1
}

// cliRunner runs the temporal CLI as an operator would.
type cliRunner struct {
	t    *testing.T
	ns   string
	bin  string
	addr string
	home string
}

func (c cliRunner) run(ctx context.Context, args ...string) string {
	c.t.Helper()
	args = append(args, "--address", c.addr, "--namespace", c.ns)
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "XDG_CONFIG_HOME="+c.home, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	c.t.Logf("$ temporal %s\n%s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	require.NoError(c.t, err)
	return string(out)
}
