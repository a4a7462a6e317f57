package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/workflows"
)

const (
	progName = "loopguard-worker"

	// defaultSearchAttribute is the guard's Keyword search attribute: the
	// embedded server registers it; on an external server it is used when
	// the namespace already has it.
	defaultSearchAttribute = "LoopGuardState"
	// defaultPausedSinceAttribute is the guard's Datetime search attribute:
	// when the pause in force began. It goes with the Keyword one.
	defaultPausedSinceAttribute = "LoopGuardPausedSince"
	// searchAttributeNone disables the search attribute.
	searchAttributeNone = "none"
	// defaultSupervisorID is the workflow id of the Supervisor workflow.
	defaultSupervisorID = "loopguard-supervisor"
)

// config is the parsed command line and environment.
type config struct {
	// Connection. remote is true when an external server is dialled, and
	// remoteBy names the setting that says so (see externalServer); address
	// and namespace are the flags' values ("" when not given: the
	// environment and the client config file decide).
	remote         bool
	remoteBy       string
	address        string
	namespace      string
	connectTimeout time.Duration

	// Embedded server.
	dataDir        string
	ephemeral      bool
	port           int
	uiPort         int
	httpPort       int
	noUI           bool
	serverLogLevel string

	// Links to the Web UI in the demo's table; default: the embedded UI.
	uiURL string

	// Worker and guard.
	taskQueue       string
	policyPath      string
	onHalt          string
	pauseTimeout    time.Duration
	searchAttribute string // "" means the default for the mode; "none" disables
	supervisorID    string // "" disables the supervisor
	// operatorKeys are public key files (keygen's PREFIX.pub): answers to
	// halts must be signed by one of them.
	operatorKeys stringList

	// metricsAddr is where /metrics is served; "" (the default) for nowhere.
	metricsAddr string

	// Logging.
	logLevel    zapcore.Level
	logLevelSet bool
	logFormat   string

	// Demo.
	demo        bool
	demoExit    bool
	demoTimeout time.Duration
}

// usageError is an invalid command line, flag value or policy file: the
// worker exits with status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// embeddedOnlyFlags apply to the embedded server only.
var embeddedOnlyFlags = []string{"data-dir", "ephemeral", "port", "ui-port", "http-port", "no-ui", "server-log-level"}

// newFlagSet defines the worker's flags on cfg.
func newFlagSet(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet(progName, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by main
	fs.Usage = func() {}

	fs.StringVar(&cfg.address, "address", "", "host:port of an external Temporal frontend (default $TEMPORAL_ADDRESS, else the temporal CLI profile's address; when nothing names a server, an embedded one is started: see \"Which server\" above)")
	fs.StringVar(&cfg.namespace, "namespace", "", `Temporal namespace (default $TEMPORAL_NAMESPACE, else "default")`)
	fs.DurationVar(&cfg.connectTimeout, "connect-timeout", 10*time.Second, "how long to wait for an external server to answer at startup")

	fs.StringVar(&cfg.dataDir, "data-dir", devserver.DefaultDataDir, "embedded server: directory of the SQLite database (workflows survive restarts)")
	fs.BoolVar(&cfg.ephemeral, "ephemeral", false, "embedded server: keep everything in memory, lost on exit")
	fs.IntVar(&cfg.port, "port", devserver.DefaultFrontendPort, "embedded server: gRPC port of the frontend on 127.0.0.1 (0: a free port)")
	fs.IntVar(&cfg.uiPort, "ui-port", devserver.DefaultUIPort, "embedded server: port of the Web UI on 127.0.0.1 (0: a free port)")
	fs.IntVar(&cfg.httpPort, "http-port", 0, "embedded server: port of the frontend's HTTP API on 127.0.0.1 (0: a free port)")
	fs.BoolVar(&cfg.noUI, "no-ui", false, "embedded server: do not start the Web UI")
	fs.StringVar(&cfg.serverLogLevel, "server-log-level", devserver.DefaultServerLogLevel, "embedded server: level of the Temporal server's own logs (debug, info, warn, error, off)")
	fs.StringVar(&cfg.uiURL, "ui-url", "", "base URL of the Temporal Web UI for the links the demo prints (default: the embedded server's UI)")

	fs.StringVar(&cfg.taskQueue, "task-queue", workflows.TaskQueue, "task queue the worker polls")
	fs.StringVar(&cfg.policyPath, "policy", "", "JSON policy file (interceptor.ParsePolicy's format: thresholds, durations such as \"10m\", onHalt, workflows, per-node options) overlaid on the samples' options")
	fs.StringVar(&cfg.onHalt, "on-halt", "", "what a halt does: pause, fail or observe (overrides the policy file; default pause)")
	fs.DurationVar(&cfg.pauseTimeout, "pause-timeout", 0, "end a pause nobody answered after this long with the policy's onPauseTimeout (overrides the policy file; default: wait forever)")
	fs.StringVar(&cfg.searchAttribute, "search-attribute", "", `Keyword search attribute the guard sets to "halted:<reason>" etc.; "none" to disable (default LoopGuardState with the embedded server, or on an external one if registered there)`)
	fs.Var(&cfg.operatorKeys, "operator-key", "public key file of an operator (keygen's PREFIX.pub); repeat it for several: answers to halts must then be signed (answer --key) (default: none, plain answers)")
	fs.StringVar(&cfg.supervisorID, "supervisor-id", defaultSupervisorID, `workflow id of the Supervisor that collects every halt ("" to run without)`)

	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve Prometheus metrics (the SDK's and the guard's, prefixed loopguard_) at http://HOST:PORT/metrics, e.g. 127.0.0.1:9464 (default: off)")

	fs.Func("log-level", "log level: debug, info, warn or error (default info; off while the demo waits unless given)", func(s string) error {
		l, err := zapcore.ParseLevel(s)
		if err != nil || l > zapcore.ErrorLevel {
			return fmt.Errorf("%q is not one of debug, info, warn, error", s)
		}
		cfg.logLevel, cfg.logLevelSet = l, true
		return nil
	})
	fs.StringVar(&cfg.logFormat, "log-format", "console", "log format: console or json")

	fs.BoolVar(&cfg.demo, "demo", false, "start one workflow per sample scenario, wait for each to complete or halt, and print a table with the commands that resume or escalate the halted ones")
	fs.BoolVar(&cfg.demoExit, "demo-exit", false, "with --demo: exit after the table (status 1 if an outcome differs from the scenario's expectation)")
	fs.DurationVar(&cfg.demoTimeout, "demo-timeout", 2*time.Minute, "with --demo: how long to wait for the workflows to complete or halt")
	return fs
}

// parseFlags parses args; getenv reads the environment. It returns
// flag.ErrHelp for -h and --help, and a *usageError for anything invalid.
func parseFlags(args []string, getenv func(string) string) (config, error) {
	cfg := config{logLevel: zapcore.InfoLevel}
	fs := newFlagSet(&cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, &usageError{err: err}
	}
	if fs.NArg() > 0 {
		return cfg, usagef("unexpected argument %q (all options are flags; see --help)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if set["address"] && strings.TrimSpace(cfg.address) == "" {
		return cfg, usagef("--address must not be empty")
	}
	by, err := externalServer(cfg.address, getenv)
	if err != nil {
		return cfg, &usageError{err: err}
	}
	cfg.remote, cfg.remoteBy = by != "", by
	if cfg.remote {
		for _, name := range embeddedOnlyFlags {
			if set[name] {
				return cfg, usagef("--%s applies to the embedded server only, but an external server is configured (by %s)", name, by)
			}
		}
	} else {
		if cfg.ephemeral && set["data-dir"] {
			return cfg, usagef("--data-dir and --ephemeral exclude each other")
		}
		if cfg.ephemeral {
			cfg.dataDir = ""
		}
		if strings.TrimSpace(cfg.dataDir) == "" && !cfg.ephemeral {
			return cfg, usagef("--data-dir must not be empty (use --ephemeral for an in-memory server)")
		}
		for _, p := range []struct {
			name string
			v    int
		}{{"port", cfg.port}, {"ui-port", cfg.uiPort}, {"http-port", cfg.httpPort}} {
			if p.v < 0 || p.v > 65535 {
				return cfg, usagef("--%s must be between 0 and 65535, got %d", p.name, p.v)
			}
		}
		switch strings.ToLower(cfg.serverLogLevel) {
		case "debug", "info", "warn", "error", "off":
		default:
			return cfg, usagef("--server-log-level: %q is not one of debug, info, warn, error, off", cfg.serverLogLevel)
		}
	}
	if set["namespace"] && strings.TrimSpace(cfg.namespace) == "" {
		return cfg, usagef("--namespace must not be empty")
	}
	if cfg.namespace == "" && !cfg.remote {
		// The client config (envconfig) reads it for an external server.
		cfg.namespace = getenv("TEMPORAL_NAMESPACE")
	}
	if cfg.connectTimeout <= 0 {
		return cfg, usagef("--connect-timeout must be positive, got %s", cfg.connectTimeout)
	}
	if strings.TrimSpace(cfg.taskQueue) == "" {
		return cfg, usagef("--task-queue must not be empty")
	}
	switch protocol.OnHalt(cfg.onHalt) {
	case "", protocol.OnHaltPause, protocol.OnHaltFail, protocol.OnHaltObserve:
	default:
		return cfg, usagef("--on-halt: %q is not one of pause, fail, observe", cfg.onHalt)
	}
	if cfg.pauseTimeout < 0 {
		return cfg, usagef("--pause-timeout must not be negative, got %s", cfg.pauseTimeout)
	}
	if strings.TrimSpace(cfg.searchAttribute) != cfg.searchAttribute || set["search-attribute"] && cfg.searchAttribute == "" {
		return cfg, usagef(`--search-attribute: %q is not a search attribute name (use "none" to disable)`, cfg.searchAttribute)
	}
	if strings.TrimSpace(cfg.supervisorID) != cfg.supervisorID {
		return cfg, usagef("--supervisor-id must not have surrounding spaces")
	}
	if set["metrics-addr"] {
		if _, port, err := net.SplitHostPort(cfg.metricsAddr); err != nil || port == "" {
			return cfg, usagef("--metrics-addr: %q is not HOST:PORT (e.g. 127.0.0.1:9464)", cfg.metricsAddr)
		}
	}
	switch cfg.logFormat {
	case "console", "json":
	default:
		return cfg, usagef("--log-format: %q is not one of console, json", cfg.logFormat)
	}
	if cfg.demo && len(cfg.operatorKeys) > 0 {
		// The demo plays the operator of its steered scenarios with plain
		// resumes, which a guard with keys refuses, and prints plain
		// commands.
		return cfg, usagef("--demo answers halts unsigned: run it without --operator-key")
	}
	if cfg.demoExit && !cfg.demo {
		return cfg, usagef("--demo-exit needs --demo")
	}
	if cfg.demoTimeout <= 0 {
		return cfg, usagef("--demo-timeout must be positive, got %s", cfg.demoTimeout)
	}
	if cfg.uiURL != "" && !strings.HasPrefix(cfg.uiURL, "http://") && !strings.HasPrefix(cfg.uiURL, "https://") {
		return cfg, usagef("--ui-url must start with http:// or https://, got %q", cfg.uiURL)
	}
	cfg.uiURL = strings.TrimRight(cfg.uiURL, "/")
	return cfg, nil
}

// printUsage writes the --help text.
func printUsage(w io.Writer) {
	var cfg config
	fs := newFlagSet(&cfg)
	fs.SetOutput(w)
	fmt.Fprintf(w, `%s runs a Temporal worker with the loopguard interceptor and the sample agent loops.

It dials an external Temporal server when one is configured the way the
temporal CLI reads it; otherwise it starts an embedded Temporal server and
Web UI on 127.0.0.1, keeping its state in ./%s.

Usage:
  %s [flags]
  %s --demo            # run every sample scenario and show what the guard did
  %s analyze DIR       # what the guard would have done to past runs (analyze --help)
  %s watch --query Q   # guard running workflows of any SDK from outside (watch --help)
  %s keygen --id ID    # a key pair for signing answers to halts
  %s answer --workflow-id ID --key FILE resume|escalate|halt   # sign and send an answer

Which server (the first that is set decides; an external server when any is):
  1. --address
  2. TEMPORAL_ADDRESS
  3. TEMPORAL_PROFILE: that profile of the temporal CLI's config file
  4. TEMPORAL_CONFIG_FILE: that file's "default" profile
  5. a "default" profile in the CLI's default config file
     (%s)
  none of these: the embedded server.

Connection settings (external server; the temporal CLI's rules): a flag wins
over a TEMPORAL_* variable, which wins over the profile in the config file.
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS,
  TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH (or *_DATA),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME,
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION, TEMPORAL_GRPC_META_*,
  TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE

Flags:
`, progName, devserver.DefaultDataDir, progName, progName, progName, progName, progName, progName, defaultConfigFileHelp())
	fs.PrintDefaults()
}

// defaultConfigFileHelp names the CLI's default config file for --help.
func defaultConfigFileHelp() string {
	if f := defaultConfigFile(os.Getenv); f != "" {
		return f
	}
	return "$XDG_CONFIG_HOME or ~/.config, then temporalio/temporal.toml"
}
