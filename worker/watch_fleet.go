package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/worker/watch"
)

// fleetConfig is the watch subcommand's fleet flags.
type fleetConfig struct {
	enabled          bool
	workerOnly       bool
	shards           int
	taskQueue        string
	workflowID       string
	heartbeatTimeout time.Duration
}

func (c fleetConfig) on() bool { return c.enabled || c.workerOnly }

func addFleetFlags(fs *flag.FlagSet, c *fleetConfig) {
	fs.BoolVar(&c.enabled, "fleet", false, "run the watch as a fleet on Temporal: start (or join) the fleet workflow and run a worker for its shards; run the same command on every machine")
	fs.BoolVar(&c.workerOnly, "fleet-worker-only", false, "run only a fleet worker (the fleet workflow is started elsewhere)")
	fs.IntVar(&c.shards, "shards", 0, "with --fleet: the number of shards of workflow ids, each one heartbeating activity (default 1)")
	fs.StringVar(&c.taskQueue, "fleet-task-queue", watch.DefaultFleetTaskQueue, "the fleet's task queue")
	fs.StringVar(&c.workflowID, "fleet-id", watch.DefaultFleetWorkflowID, "the fleet workflow's id")
	fs.DurationVar(&c.heartbeatTimeout, "heartbeat-timeout", watch.DefaultHeartbeatTimeout, "with --fleet: how long a shard's machine may be silent before Temporal restarts the shard on another")
}

// checkFleetFlags refuses fleet flags that contradict the others.
func checkFleetFlags(cfg watchConfig) error {
	c := cfg.fleet
	switch {
	case c.shards < 0:
		return usagef("--shards must be positive, got %d", c.shards)
	case c.shards > 0 && !c.enabled:
		return usagef("--shards applies to --fleet (a single watcher takes --shard INDEX/COUNT)")
	case c.on() && cfg.shard != "":
		return usagef("--shard and --fleet exclude each other: the fleet deals the shards out itself (--shards N)")
	case c.enabled && c.workerOnly:
		return usagef("--fleet and --fleet-worker-only exclude each other")
	case c.heartbeatTimeout < time.Second:
		return usagef("--heartbeat-timeout must be at least 1s, got %s", c.heartbeatTimeout)
	}
	return nil
}

// fleetInput is the fleet workflow's input from the flags: the policy
// travels as JSON so that every machine judges with the starter's.
func fleetInput(cfg watchConfig, opts watch.Options) (watch.FleetInput, error) {
	policy, err := interceptor.PolicyJSON(opts.Guard)
	if err != nil {
		return watch.FleetInput{}, fmt.Errorf("--policy: %w", err)
	}
	return watch.FleetInput{
		Query: opts.Query, Policy: string(policy), Shards: cfg.fleet.shards,
		OnPauseRefused: opts.OnPauseRefused, SignalWarnings: opts.SignalWarnings,
		PollInterval: opts.PollInterval, MaxFollowed: opts.MaxFollowed, HeartbeatTimeout: cfg.fleet.heartbeatTimeout,
	}, nil
}

// runWatchFleet is `worker watch --fleet` and `--fleet-worker-only`.
func runWatchFleet(ctx context.Context, cfg watchConfig, opts watch.Options, b *backend, stdout io.Writer) error {
	f, err := watch.NewFleet(watch.FleetOptions{
		Client: b.client, Namespace: b.namespace, TaskQueue: cfg.fleet.taskQueue, WorkflowID: cfg.fleet.workflowID,
		Identity: opts.Identity, Logger: opts.Logger, Metrics: opts.Metrics,
	})
	if err != nil {
		return &usageError{err: err}
	}
	log := opts.Logger
	if cfg.fleet.enabled {
		in, err := fleetInput(cfg, opts)
		if err != nil {
			return &usageError{err: err}
		}
		run, err := f.Start(ctx, in)
		if err != nil {
			return fmt.Errorf("watch: start the fleet: %w", err)
		}
		fmt.Fprintf(stdout, "loopguard watch: fleet %s (run %s) on task queue %s in namespace %s at %s.\n",
			cfg.fleet.workflowID, run.GetRunID(), cfg.fleet.taskQueue, b.namespace, b.address)
		if got, err := f.Input(ctx); err == nil && (got.Shards != max(in.Shards, 1) || got.Query != in.Query || got.Policy != in.Policy) {
			log.Warn("watch: the running fleet was started with other flags; it keeps them (terminate it to change them)",
				zap.Int("shards", got.Shards), zap.String("query", got.Query))
		}
	}
	if cfg.statusAddr != "" {
		stop, addr, err := serveStatus(cfg.statusAddr, func(ctx context.Context) (any, error) { return f.Shards(ctx) })
		if err != nil {
			return err
		}
		defer stop()
		fmt.Fprintf(stdout, "  status   http://%s/status (the shards' heartbeats)\n", addr)
	}
	w := f.NewWorker(sdkworker.Options{})
	if err := w.Start(); err != nil {
		return fmt.Errorf("watch: fleet worker: %w", err)
	}
	defer w.Stop()
	fmt.Fprintf(stdout, "loopguard watch: fleet worker polling %s. Ctrl-C stops it; its shards move to the other workers.\n", cfg.fleet.taskQueue)
	<-ctx.Done()
	return nil
}
