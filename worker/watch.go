package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/loopguard/loopguard/worker/watch"
)

// watchCommand is the name of the subcommand that guards running
// executions of any SDK from outside (package watch).
const watchCommand = "watch"

// watchConfig is the watch subcommand's flags.
type watchConfig struct {
	query          string
	codecEndpoint  string
	policy         string
	workflows      string
	address        string
	namespace      string
	connectTimeout time.Duration
	onRefused      string
	signalWarnings bool
	identity       string
	shard          string
	pollInterval   time.Duration
	maxFollowed    int
	statusAddr     string
	metricsAddr    string
	logLevel       string
	fleet          fleetConfig
}

func newWatchFlagSet(cfg *watchConfig) *flag.FlagSet {
	fs := flag.NewFlagSet(progName+" "+watchCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.query, "query", "", `visibility query selecting the executions to follow (e.g. 'WorkflowType="AgentLoop"'); the watcher adds that they run (default: every running execution)`)
	fs.StringVar(&cfg.policy, "policy", defaultPolicy, `options to judge under, as analyze takes them: "tool_call" (GrainToolCall, Warnings 1: the README's guard), "defaults" (the zero Options) or a JSON policy file`)
	fs.StringVar(&cfg.workflows, "workflows", "", "comma-separated workflow types to guard (Options.Workflows; default: those of the policy, else all)")
	fs.StringVar(&cfg.address, "address", "", "host:port of the Temporal frontend (default $TEMPORAL_ADDRESS, else the temporal CLI profile's, else 127.0.0.1:7233)")
	fs.StringVar(&cfg.namespace, "namespace", "", `namespace (default $TEMPORAL_NAMESPACE, else "default")`)
	fs.DurationVar(&cfg.connectTimeout, "connect-timeout", 10*time.Second, "how long to wait for the server")
	fs.StringVar(&cfg.onRefused, "on-pause-refused", "signal", "what a halt does where the server refuses Workflow Pause: signal (loop.halted), cancel or observe")
	fs.BoolVar(&cfg.signalWarnings, "signal-warnings", false, "signal each warning to its workflow as loop.warning")
	fs.StringVar(&cfg.identity, "identity", "", `identity of the pauses and signals (default "loopguard-watch@<host>")`)
	fs.StringVar(&cfg.shard, "shard", "", `INDEX/COUNT: follow only the workflow ids whose FNV-1a hash modulo COUNT is INDEX (default: all)`)
	fs.DurationVar(&cfg.pollInterval, "poll-interval", watch.DefaultPollInterval, "how often the query is listed again for new executions")
	fs.IntVar(&cfg.maxFollowed, "max-followed", watch.DefaultMaxFollowed, "most executions followed at once")
	fs.StringVar(&cfg.statusAddr, "status-addr", "", "serve the watcher's status as JSON at http://ADDR/status (e.g. 127.0.0.1:8090)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&cfg.codecEndpoint, "codec-endpoint", "", "remote codec server that decodes the histories' payloads, as the temporal CLI's --codec-endpoint")
	addFleetFlags(fs, &cfg.fleet)
	return fs
}

// watchOptions reads the flags into the watcher's options (all but the
// client, logger and metrics).
func watchOptions(args []string) (watchConfig, watch.Options, error) {
	var cfg watchConfig
	fs := newWatchFlagSet(&cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, watch.Options{}, err
		}
		return cfg, watch.Options{}, &usageError{err: err}
	}
	if fs.NArg() > 0 {
		return cfg, watch.Options{}, usagef("watch takes no arguments (got %q): select executions with --query", fs.Arg(0))
	}
	guard, err := analyzeOptions(cfg.policy, cfg.workflows)
	if err != nil {
		return cfg, watch.Options{}, err
	}
	fb, err := watch.ParseFallback(cfg.onRefused)
	if err != nil {
		return cfg, watch.Options{}, &usageError{err: fmt.Errorf("--on-pause-refused: %w", err)}
	}
	o := watch.Options{
		Query: cfg.query, Guard: guard, OnPauseRefused: fb, SignalWarnings: cfg.signalWarnings,
		Identity: cfg.identity, PollInterval: cfg.pollInterval, MaxFollowed: cfg.maxFollowed,
		DataConverter: codecConverter(cfg.codecEndpoint),
	}
	if cfg.shard != "" {
		i, n, ok := strings.Cut(cfg.shard, "/")
		o.Shard.Index, err = strconv.Atoi(i)
		if err == nil {
			o.Shard.Count, err = strconv.Atoi(n)
		}
		if !ok || err != nil || o.Shard.Count < 1 || o.Shard.Index < 0 || o.Shard.Index >= o.Shard.Count {
			return cfg, o, usagef("--shard: %q is not INDEX/COUNT with 0 <= INDEX < COUNT", cfg.shard)
		}
	}
	if cfg.pollInterval <= 0 {
		return cfg, o, usagef("--poll-interval must be positive, got %s", cfg.pollInterval)
	}
	if cfg.maxFollowed <= 0 {
		return cfg, o, usagef("--max-followed must be positive, got %d", cfg.maxFollowed)
	}
	if err := checkFleetFlags(cfg); err != nil {
		return cfg, o, err
	}
	return cfg, o, nil
}

// runWatch is `worker watch`.
func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, opts, err := watchOptions(args)
	if errors.Is(err, flag.ErrHelp) {
		printWatchUsage(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	var level zapcore.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return usagef("--log-level: %q is not one of debug, info, warn, error", cfg.logLevel)
	}
	logger := newLogger(stderr, zap.NewAtomicLevelAt(level), "console")
	defer func() { _ = logger.Sync() }()
	var handler client.MetricsHandler
	if cfg.metricsAddr != "" {
		m, err := startMetrics(cfg.metricsAddr, logger)
		if err != nil {
			return err
		}
		defer m.close()
		handler = m.handler
		fmt.Fprintf(stdout, "  metrics  http://%s/metrics\n", m.addr)
	}
	b, err := dialExternal(ctx, config{address: cfg.address, namespace: cfg.namespace, connectTimeout: cfg.connectTimeout, searchAttribute: searchAttributeNone}, handler, logger)
	if err != nil {
		return err
	}
	defer func() { _ = b.close() }()
	opts.Client, opts.Namespace, opts.Logger, opts.Metrics = b.client, b.namespace, logger.Named("watch"), handler
	if cfg.fleet.on() {
		return runWatchFleet(ctx, cfg, opts, b, stdout)
	}
	w, err := watch.New(opts)
	if err != nil {
		return &usageError{err: err}
	}
	if cfg.statusAddr != "" {
		stop, addr, err := serveStatus(cfg.statusAddr, func(context.Context) (any, error) { return w.Status(), nil })
		if err != nil {
			return err
		}
		defer stop()
		fmt.Fprintf(stdout, "  status   http://%s/status\n", addr)
	}
	fmt.Fprintf(stdout, "loopguard watch: following %s in namespace %s at %s. Ctrl-C stops it.\n", w.Query(), b.namespace, b.address)
	return w.Run(ctx)
}

// serveStatus serves status as JSON at /status.
func serveStatus(addr string, status func(context.Context) (any, error)) (stop func(), bound string, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--status-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(rw http.ResponseWriter, r *http.Request) {
		s, err := status(r.Context())
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(rw)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, ln.Addr().String(), nil
}

// printWatchUsage prints the subcommand's help.
func printWatchUsage(w io.Writer) {
	var cfg watchConfig
	fs := newWatchFlagSet(&cfg)
	fs.SetOutput(w)
	fmt.Fprintf(w, `%[1]s %[2]s guards running workflows of any SDK from outside: it follows the
executions a query selects, judges each history as it grows with the guard's
own judgement, and pauses an execution that halts with Temporal's Workflow
Pause (server v1.30+ with frontend.WorkflowPauseEnabled; docs/watch.md).

Usage:
  %[1]s %[2]s [flags] [--query QUERY]
  %[1]s %[2]s --fleet --shards N [flags]   (on each machine: the watch as a
      Temporal workflow of N heartbeating shard activities; docs/watch.md)

Connection follows the temporal CLI: --address and --namespace, else
TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS and profile settings.

Flags:
`, progName, watchCommand)
	fs.PrintDefaults()
}
