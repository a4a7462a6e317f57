package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
)

// The fleet runs the watch on Temporal itself: one fleet workflow starts
// one long-running, heartbeating activity per shard of workflow ids, and
// every process of the fleet polls the same task queue, so Temporal
// spreads the shards over the processes, restarts a lost one elsewhere
// (heartbeat timeout, then retry) and hands the new attempt the old
// one's last heartbeat.

// Names of the fleet's workflow, activity and query, and its defaults.
const (
	// FleetWorkflow is the workflow type of the fleet.
	FleetWorkflow = "loopguard.WatchFleet"
	// ShardActivity is the activity type of one shard's watch.
	ShardActivity = "loopguard.WatchShard"
	// FleetInputQuery answers the fleet workflow's FleetInput.
	FleetInputQuery = "loopguard.fleet.input"

	DefaultFleetTaskQueue  = "loopguard-watch"
	DefaultFleetWorkflowID = "loopguard-watch-fleet"
	// DefaultHeartbeatTimeout is how long a shard's process may be silent
	// before Temporal restarts the shard elsewhere: the detection gap
	// after a loss.
	DefaultHeartbeatTimeout = 30 * time.Second
	// ShardTerm is one attempt's StartToClose timeout: an attempt that
	// lives this long ends and is retried (a retry writes no event in the
	// fleet's history), so no attempt is older than a day.
	ShardTerm = 24 * time.Hour
	// MaxHeartbeatRuns bounds the cursors a heartbeat carries: the server
	// refuses heartbeat details above 2 MB (blob size limit), and a run's
	// cursor takes about 120 bytes of JSON.
	MaxHeartbeatRuns = 5000
	// MaxHeartbeatHalts bounds the halted runs a heartbeat lists, for the
	// same limit (about 250 bytes each).
	MaxHeartbeatHalts = 1000
)

// retryPolicy retries a shard forever: the first retry after a second,
// then doubling to at most 10 s.
var retryPolicy = &temporal.RetryPolicy{
	InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
	NonRetryableErrorTypes: []string{fleetConfigError},
}

// fleetConfigError is the failure type of a fleet the watch cannot run
// with (a bad query or policy): retrying cannot help.
const fleetConfigError = "loopguard.FleetConfig"

// FleetInput is the fleet workflow's input: what every shard watches and
// how. The processes of the fleet start the workflow with the same input;
// the first start wins and the others join it.
type FleetInput struct {
	// Query selects the executions watched, as Options.Query.
	Query string `json:"query,omitempty"`
	// Policy is a JSON policy (interceptor.PolicyJSON) applied on each
	// process's FleetOptions.Guard, so that the fleet judges with one
	// policy. Default "": FleetOptions.Guard as it is.
	Policy string `json:"policy,omitempty"`
	// Shards is the number of shards of workflow ids (Shard.Count).
	// Default 1.
	Shards int `json:"shards,omitempty"`
	// OnPauseRefused, SignalWarnings, PollInterval and MaxFollowed (per
	// shard) are the watcher's Options, with their defaults.
	OnPauseRefused Fallback      `json:"onPauseRefused,omitempty"`
	SignalWarnings bool          `json:"signalWarnings,omitempty"`
	PollInterval   time.Duration `json:"pollInterval,omitempty"`
	MaxFollowed    int           `json:"maxFollowed,omitempty"`
	// HeartbeatTimeout is each shard's heartbeat timeout. Default
	// DefaultHeartbeatTimeout (30s); a shard heartbeats every third of it.
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitempty"`
}

func (in FleetInput) withDefaults() (FleetInput, error) {
	if in.Shards == 0 {
		in.Shards = 1
	}
	if in.HeartbeatTimeout == 0 {
		in.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	switch {
	case in.Shards < 0:
		return in, fmt.Errorf("watch: FleetInput.Shards %d is negative", in.Shards)
	case in.HeartbeatTimeout < time.Second:
		return in, fmt.Errorf("watch: FleetInput.HeartbeatTimeout %s is under a second", in.HeartbeatTimeout)
	}
	return in, nil
}

// ShardInput is the input of one shard's activity.
type ShardInput struct {
	Fleet FleetInput `json:"fleet"`
	Index int        `json:"index"`
}

// ShardProgress is a shard's heartbeat: what it follows, how far it read
// each run, and what it did. Temporal shows it in the fleet workflow's
// pending activities, and hands it to the shard's next attempt.
type ShardProgress struct {
	Index    int    `json:"index"`
	Count    int    `json:"count"`
	Identity string `json:"identity"`
	Attempt  int32  `json:"attempt"`
	// Resumed counts the runs this attempt followed at once from the
	// previous attempt's heartbeat.
	Resumed  int `json:"resumed,omitempty"`
	Followed int `json:"followed"`
	// Runs are the followed runs and their cursors, the first
	// MaxHeartbeatRuns by workflow id.
	Runs     []RunCursor `json:"runs,omitempty"`
	Warnings int         `json:"warnings"`
	Halts    int         `json:"halts"`
	Pauses   int         `json:"pauses"`
	Escaped  int         `json:"escaped,omitempty"`
	// Ahead and Undone are Status's: the pauses asked ahead of their
	// halt, and those undone.
	Ahead   int      `json:"ahead,omitempty"`
	Undone  int      `json:"undone,omitempty"`
	Refusal *Refusal `json:"refusal,omitempty"`
	// Halted are the followed runs with a halt, each with its newest
	// halt, the first MaxHeartbeatHalts by workflow id: the fleet's
	// listing of its halts (the full evidence is in the shard's log).
	Halted []ShardHalt `json:"halted,omitempty"`
}

// ShardHalt is a followed run's newest halt, as a shard lists it.
type ShardHalt struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	Call       int    `json:"call"`
	Seq        int    `json:"seq"`
	Detector   string `json:"detector"`
	Node       string `json:"node"`
	// Action is what the watcher did (HaltStatus.Action); Paused is
	// set while the run is paused.
	Action string `json:"action,omitempty"`
	Paused bool   `json:"paused"`
}

// RunCursor is one followed run and the last event of its history read.
type RunCursor struct {
	WorkflowID  string `json:"workflowId"`
	RunID       string `json:"runId"`
	LastEventID int64  `json:"lastEventId"`
}

// FleetOptions configures a Fleet, the part of the fleet one process
// runs. Only Client must be set.
type FleetOptions struct {
	// Client talks to the server: the fleet's worker polls with it and
	// its shards watch with it.
	Client client.Client
	// Namespace is the namespace watched, that of Client. Default
	// "default".
	Namespace string
	// TaskQueue is the fleet's task queue. Default DefaultFleetTaskQueue
	// ("loopguard-watch").
	TaskQueue string
	// WorkflowID is the fleet workflow's id. Default
	// DefaultFleetWorkflowID ("loopguard-watch-fleet").
	WorkflowID string
	// Guard is the policy FleetInput.Policy is applied on; its func
	// fields (NodeName, Progress, ...) cannot travel in the input and are
	// taken from here. Default: the guard's defaults.
	Guard interceptor.Options
	// Identity names this process in pauses, signals and heartbeats; a
	// shard adds " shard i/n". Default "loopguard-watch@<host>".
	Identity string
	// Logger and Metrics are the watchers'. Default: none.
	Logger  *zap.Logger
	Metrics client.MetricsHandler
}

// Fleet is one process of the watch fleet.
type Fleet struct {
	opts FleetOptions
}

// NewFleet returns a Fleet, or an error naming the first invalid option.
func NewFleet(opts FleetOptions) (*Fleet, error) {
	if opts.Client == nil {
		return nil, errors.New("watch: FleetOptions.Client is nil")
	}
	if opts.Namespace == "" {
		opts.Namespace = client.DefaultNamespace
	}
	if opts.TaskQueue == "" {
		opts.TaskQueue = DefaultFleetTaskQueue
	}
	if opts.WorkflowID == "" {
		opts.WorkflowID = DefaultFleetWorkflowID
	}
	if opts.Identity == "" {
		host, _ := os.Hostname()
		opts.Identity = PauseIdentity + "@" + host
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if _, err := newReader(opts.Guard, nil); err != nil {
		return nil, fmt.Errorf("watch: FleetOptions.Guard: %w", err)
	}
	return &Fleet{opts: opts}, nil
}

// Register registers the fleet workflow and the shard activity on r.
func (f *Fleet) Register(r worker.Registry) {
	r.RegisterWorkflowWithOptions(fleetWorkflow, workflow.RegisterOptions{Name: FleetWorkflow})
	r.RegisterActivityWithOptions(f.watchShard, activity.RegisterOptions{Name: ShardActivity})
}

// NewWorker returns a worker on the fleet's task queue with the fleet
// registered; the caller starts and stops it.
func (f *Fleet) NewWorker(wo worker.Options) worker.Worker {
	if wo.Identity == "" {
		wo.Identity = f.opts.Identity
	}
	w := worker.New(f.opts.Client, f.opts.TaskQueue, wo)
	f.Register(w)
	return w
}

// Start starts the fleet workflow with in, or joins the one running
// (WorkflowIDConflictPolicy UseExisting): every process can run the same
// command. The running fleet keeps its own input; compare with Input.
func (f *Fleet) Start(ctx context.Context, in FleetInput) (client.WorkflowRun, error) {
	in, err := in.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := f.shardOptions(ShardInput{Fleet: in}); err != nil {
		return nil, err
	}
	return f.opts.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: f.opts.WorkflowID, TaskQueue: f.opts.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, FleetWorkflow, in)
}

// Input asks the running fleet workflow for its input.
func (f *Fleet) Input(ctx context.Context) (FleetInput, error) {
	var in FleetInput
	v, err := f.opts.Client.QueryWorkflow(ctx, f.opts.WorkflowID, "", FleetInputQuery)
	if err == nil {
		err = v.Get(&in)
	}
	return in, err
}

// Shards reads each running shard's last heartbeat from the fleet
// workflow's pending activities, by index.
func (f *Fleet) Shards(ctx context.Context) ([]ShardProgress, error) {
	d, err := f.opts.Client.DescribeWorkflowExecution(ctx, f.opts.WorkflowID, "")
	if err != nil {
		return nil, err
	}
	var out []ShardProgress
	for _, pa := range d.GetPendingActivities() {
		var p ShardProgress
		if pa.GetHeartbeatDetails() == nil {
			continue // not heartbeated yet
		}
		if err := converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p); err != nil {
			return nil, fmt.Errorf("watch: shard heartbeat: %w", err)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	return out, nil
}

// fleetWorkflow runs one shard activity per shard until one fails for
// good (its error ends the fleet) or the server suggests continuing as
// new. Shard restarts are activity retries, which add no event, so the
// history stays at a few events per shard.
func fleetWorkflow(ctx workflow.Context, in FleetInput) error {
	in, err := in.withDefaults()
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), fleetConfigError, nil)
	}
	if err := workflow.SetQueryHandler(ctx, FleetInputQuery, func() (FleetInput, error) { return in, nil }); err != nil {
		return err
	}
	actx, cancel := workflow.WithCancel(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: ShardTerm, HeartbeatTimeout: in.HeartbeatTimeout,
		RetryPolicy: retryPolicy, WaitForCancellation: true,
	}))
	var failed error
	running := in.Shards
	for i := range in.Shards {
		fut := workflow.ExecuteActivity(actx, ShardActivity, ShardInput{Fleet: in, Index: i})
		workflow.Go(ctx, func(gctx workflow.Context) {
			err := fut.Get(gctx, nil)
			var ce *temporal.CanceledError
			if err != nil && !errors.As(err, &ce) && failed == nil {
				failed = err
			}
			running--
		})
	}
	suggested := false
	if err := workflow.Await(ctx, func() bool {
		suggested = workflow.GetInfo(ctx).GetContinueAsNewSuggested()
		return failed != nil || running == 0 || suggested
	}); err != nil {
		return err
	}
	cancel()
	_ = workflow.Await(ctx, func() bool { return running == 0 })
	if failed != nil {
		return failed
	}
	if suggested {
		return workflow.NewContinueAsNewError(ctx, FleetWorkflow, in)
	}
	return nil
}

// shardOptions are the watcher's options for one shard.
func (f *Fleet) shardOptions(in ShardInput) (Options, error) {
	fi := in.Fleet
	guard := f.opts.Guard
	if fi.Policy != "" {
		if err := guard.ApplyPolicy([]byte(fi.Policy)); err != nil {
			return Options{}, fmt.Errorf("watch: FleetInput.Policy: %w", err)
		}
	}
	o := Options{
		Client: f.opts.Client, Namespace: f.opts.Namespace, Query: fi.Query, Guard: guard,
		OnPauseRefused: fi.OnPauseRefused, SignalWarnings: fi.SignalWarnings,
		Identity: fmt.Sprintf("%s shard %d/%d", f.opts.Identity, in.Index, fi.Shards),
		Shard:    Shard{Index: in.Index, Count: fi.Shards}, PollInterval: fi.PollInterval, MaxFollowed: fi.MaxFollowed,
		Logger:  f.opts.Logger.With(zap.String("shard", fmt.Sprintf("%d/%d", in.Index, fi.Shards))),
		Metrics: f.opts.Metrics,
	}
	return o.withDefaults()
}

// watchShard is the shard activity: a Watcher of the shard that
// heartbeats its progress until the activity is cancelled or times out.
// It never returns nil: an attempt that ends is retried, unless the
// fleet cancelled it.
func (f *Fleet) watchShard(ctx context.Context, in ShardInput) error {
	opts, err := f.shardOptions(in)
	var w *Watcher
	if err == nil {
		w, err = New(opts)
	}
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), fleetConfigError, err)
	}
	info := activity.GetInfo(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	resumed := 0
	if activity.HasHeartbeatDetails(ctx) {
		// The heartbeat only saves a listing's wait: a bad one is ignored
		// and the listing finds the runs anyway.
		var prev ShardProgress
		if err := activity.GetHeartbeatDetails(ctx, &prev); err == nil {
			resumed = w.resume(ctx, &wg, prev)
		}
		opts.Logger.Info("watch: shard resumed from its heartbeat", zap.Int32("attempt", info.Attempt),
			zap.String("from", prev.Identity), zap.Int("runs", resumed))
	}
	beat := func() {
		p := w.progress()
		p.Identity, p.Attempt, p.Resumed = opts.Identity, info.Attempt, resumed
		activity.RecordHeartbeat(ctx, p)
	}
	beat()
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(in.Fleet.HeartbeatTimeout / 3)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	if err := w.Run(ctx); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), fleetConfigError, err)
	}
	return ctx.Err()
}

// resume follows at once the runs of prev in the shard, and returns how
// many.
func (w *Watcher) resume(ctx context.Context, wg *sync.WaitGroup, prev ShardProgress) int {
	n := 0
	for _, r := range prev.Runs {
		if r.RunID == "" || !w.inShard(r.WorkflowID) {
			continue
		}
		w.start(ctx, wg, &commonpb.WorkflowExecution{WorkflowId: r.WorkflowID, RunId: r.RunID}, false)
		n++
	}
	return n
}

// progress is the watcher's heartbeat, without the attempt's identity.
func (w *Watcher) progress() ShardProgress {
	var halted []ShardHalt
	for _, e := range w.Status().Executions {
		if len(e.Halts) == 0 || len(halted) == MaxHeartbeatHalts {
			continue
		}
		h := e.Halts[len(e.Halts)-1]
		halted = append(halted, ShardHalt{WorkflowID: e.WorkflowID, RunID: e.RunID, Call: h.Call, Seq: h.Seq,
			Detector: h.Detector, Node: h.Node, Action: h.Action, Paused: e.Paused})
	}
	w.mu.Lock()
	p := ShardProgress{
		Index: w.opts.Shard.Index, Count: w.opts.Shard.Count, Followed: len(w.followed),
		Warnings: w.warnings, Halts: w.halts, Pauses: w.pauses, Escaped: w.escaped, Ahead: w.ahead, Undone: w.undone,
		Refusal: w.refusal, Halted: halted,
	}
	fs := make([]*follower, 0, len(w.followed))
	for _, f := range w.followed {
		fs = append(fs, f)
	}
	w.mu.Unlock()
	for _, f := range fs {
		f.mu.Lock()
		p.Runs = append(p.Runs, RunCursor{WorkflowID: f.workflowID, RunID: f.runID, LastEventID: f.snap.LastEventID})
		f.mu.Unlock()
	}
	sort.Slice(p.Runs, func(a, b int) bool {
		x, y := &p.Runs[a], &p.Runs[b]
		if x.WorkflowID != y.WorkflowID {
			return x.WorkflowID < y.WorkflowID
		}
		return x.RunID < y.RunID
	})
	if len(p.Runs) > MaxHeartbeatRuns {
		p.Runs = p.Runs[:MaxHeartbeatRuns]
	}
	return p
}
