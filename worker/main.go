package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/workflows"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills the process at once.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr in one line and returns the exit status:
// 0 without error, 2 for invalid flags or policy, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %s\n", progName, oneLine(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// oneLine joins the lines of a message (errors.Join puts each error on
// its own line).
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// run is the worker: it parses args, connects to (or starts) a Temporal
// server, runs the guarded worker until ctx is done, and with --demo runs
// the sample scenarios. Human output goes to stdout, logs to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case analyzeCommand:
			return runAnalyze(ctx, args[1:], stdout, stderr)
		case watchCommand:
			return runWatch(ctx, args[1:], stdout, stderr)
		case keygenCommand:
			return runKeygen(args[1:], stdout)
		case answerCommand:
			return runAnswer(ctx, args[1:], stdout)
		}
	}
	cfg, err := parseFlags(args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	guardOpts, err := guardOptions(cfg)
	if err != nil {
		return err
	}

	level := zap.NewAtomicLevelAt(cfg.logLevel)
	logger := newLogger(stderr, level, cfg.logFormat)
	defer func() { _ = logger.Sync() }()

	err = serve(ctx, cfg, guardOpts, level, logger, stdout)
	if err != nil && ctx.Err() != nil {
		// Interrupted (while starting, or during the demo): that is what
		// the user asked for, not an error.
		return nil
	}
	return err
}

// serve connects, runs the worker (and the demo) until ctx is done, and
// stops the worker, then the server.
func serve(ctx context.Context, cfg config, guardOpts interceptor.Options, level zap.AtomicLevel, logger *zap.Logger, stdout io.Writer) error {
	var metrics *metricsServer
	var handler client.MetricsHandler
	if cfg.metricsAddr != "" {
		var err error
		if metrics, err = startMetrics(cfg.metricsAddr, logger); err != nil {
			return err
		}
		defer metrics.close()
		handler = metrics.handler
	}
	b, err := connect(ctx, cfg, handler, logger)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := b.close(); cerr != nil {
			logger.Warn("stopping the embedded server", zap.Error(cerr))
		}
	}()

	guardOpts.SupervisorWorkflowID = cfg.supervisorID
	guardOpts.SearchAttribute = b.searchAttribute
	guardOpts.PausedSinceAttribute = b.pausedSince
	w, err := startWorker(b.client, cfg.taskQueue, guardOpts, logger)
	if err != nil {
		return err
	}
	defer w.Stop()

	if cfg.supervisorID != "" {
		sctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
		_, err := ensureSupervisor(sctx, b.client, cfg.supervisorID, cfg.taskQueue)
		cancel()
		if err != nil {
			return err
		}
	}
	if metrics != nil {
		enabled := 0.0
		if b.searchAttribute != "" {
			enabled = 1
		}
		handler.WithTags(map[string]string{"namespace": b.namespace}).Gauge(interceptor.MetricSearchAttributeEnabled).Update(enabled)
	}
	if metrics != nil && b.searchAttribute != "" {
		wctx, stopWatch := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			newPausedWatcher(b.client, b.namespace, b.searchAttribute, b.pausedSince, handler, logger).run(wctx, pausedPollInterval)
		}()
		defer func() { stopWatch(); <-watched }() // before the client closes
	}
	printBanner(stdout, cfg, b, metrics)

	if cfg.demo {
		d := &demo{
			client:    b.client,
			namespace: b.namespace,
			address:   b.address,
			embedded:  b.server != nil,
			uiURL:     b.uiURL,
			taskQueue: cfg.taskQueue,
			out:       stdout,
			tty:       isTerminal(stdout),
			timeout:   cfg.demoTimeout,
			nodes:     guardOpts.Nodes,
			onHalt:    guardOpts.OnHalt,
		}
		if b.server != nil && !cfg.ephemeral {
			d.dataDir, d.searchAttribute = cfg.dataDir, b.searchAttribute
		}
		// While the demo waits, logging is off (unless --log-level says
		// otherwise): the scenarios' scripted agent failures would be
		// logged as errors around the progress line, and the table tells
		// what happened.
		if !cfg.logLevelSet {
			level.SetLevel(zapcore.DPanicLevel)
		}
		results, err := d.run(ctx)
		if !cfg.logLevelSet {
			level.SetLevel(cfg.logLevel)
		}
		if err != nil {
			return err
		}
		if cfg.demoExit {
			if n := countMismatches(results); n > 0 {
				return fmt.Errorf("demo: %d of %d scenarios did not end as expected", n, len(results))
			}
			return nil
		}
		where := "with the commands above"
		if b.uiURL != "" {
			where += " or in the Web UI"
		}
		fmt.Fprintf(stdout, "\nThe worker keeps running: resume or escalate the halted workflows %s, and watch them go on here. Ctrl-C stops it.\n", where)
		followed := make(chan struct{})
		go func() {
			defer close(followed)
			d.follow(ctx, results)
		}()
		defer func() { <-followed }() // before the worker and server stop
	} else {
		fmt.Fprintln(stdout, "Worker running. Ctrl-C stops it.")
	}

	<-ctx.Done()
	logger.Info("shutting down: stopping the worker, then the server")
	return nil
}

// printBanner says where everything is.
func printBanner(w io.Writer, cfg config, b *backend, metrics *metricsServer) {
	fmt.Fprintln(w, "loopguard worker started")
	if b.server != nil {
		storage := "in memory (--ephemeral)"
		if !cfg.ephemeral {
			storage = cfg.dataDir + ", kept across runs"
		}
		fmt.Fprintf(w, "  Temporal server  %s (embedded; data: %s)\n", b.address, storage)
		// Your own workers and clients may use the embedded server too:
		// gRPC at the frontend address, the HTTP API beside it.
		fmt.Fprintf(w, "  your workers     client.Options{HostPort: %q}, or TEMPORAL_ADDRESS=%s\n", b.address, b.address)
		if b.httpAddr != "" {
			fmt.Fprintf(w, "  HTTP API         http://%s/api/v1/namespaces/%s/workflows\n", b.httpAddr, b.namespace)
		}
	} else {
		fmt.Fprintf(w, "  Temporal server  %s\n", b.address)
	}
	if b.uiURL != "" {
		fmt.Fprintf(w, "  Web UI           %s\n", workflowsURL(b.uiURL, b.namespace))
	}
	fmt.Fprintf(w, "  namespace        %s\n", b.namespace)
	fmt.Fprintf(w, "  task queue       %s\n", cfg.taskQueue)
	if cfg.supervisorID != "" {
		fmt.Fprintf(w, "  supervisor       %s (query %q: a log of the newest %d halts signalled to it, answered or not)\n",
			cfg.supervisorID, workflows.HaltedQuery, workflows.SupervisorMaxHalts)
	}
	if b.searchAttribute != "" {
		fmt.Fprintf(w, "  search attribute %s (every halt waiting for an answer: %s)\n", b.searchAttribute, interceptor.HaltsQuery(b.searchAttribute))
	}
	if metrics != nil {
		fmt.Fprintf(w, "  metrics          http://%s/metrics\n", metrics.addr)
	}
	if cfg.policyPath != "" {
		fmt.Fprintf(w, "  policy           %s\n", cfg.policyPath)
	}
	if len(cfg.operatorKeys) > 0 {
		fmt.Fprintf(w, "  operator keys    %s (answers to halts must be signed: %s %s --key ...)\n", strings.Join(cfg.operatorKeys, ", "), progName, answerCommand)
	}
}

// workflowsURL is the UI page listing the namespace's workflows.
func workflowsURL(uiURL, namespace string) string {
	return uiURL + "/namespaces/" + url.PathEscape(namespace) + "/workflows"
}

// workflowURL is the UI page of one workflow (its latest run).
func workflowURL(uiURL, namespace, workflowID string) string {
	return workflowsURL(uiURL, namespace) + "/" + url.PathEscape(workflowID)
}

// isTerminal reports whether w is a terminal, for the in-place progress
// line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
