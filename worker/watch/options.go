package watch

import (
	"errors"
	"fmt"
	"os"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Fallback is what the watcher does at a halt when the server refuses
// Workflow Pause (the namespace's frontend.WorkflowPauseEnabled is off,
// or the server is older than v1.30).
type Fallback int

const (
	// FallbackSignal signals loop.halted to the workflow with the
	// interceptor's HaltEvent as JSON, for workflows that read it.
	FallbackSignal Fallback = iota
	// FallbackCancel requests the execution's cancellation.
	FallbackCancel
	// FallbackObserve only logs and lists the halt.
	FallbackObserve
)

var fallbackNames = []string{"signal", "cancel", "observe"}

func (f Fallback) String() string {
	if f >= 0 && int(f) < len(fallbackNames) {
		return fallbackNames[f]
	}
	return fmt.Sprintf("Fallback(%d)", int(f))
}

// ParseFallback reads "signal", "cancel" or "observe".
func ParseFallback(s string) (Fallback, error) {
	for i, n := range fallbackNames {
		if s == n {
			return Fallback(i), nil
		}
	}
	return 0, fmt.Errorf("fallback %q is not one of signal, cancel, observe", s)
}

// Shard selects the workflow ids one watcher follows: those whose FNV-1a
// hash modulo Count is Index.
type Shard struct {
	// Index is the shard, 0 to Count-1. Default 0.
	Index int
	// Count is the number of shards. Default 1: every workflow id.
	Count int
}

// Signal names the watcher sends.
const (
	// HaltedSignal carries a HaltEvent (FallbackSignal).
	HaltedSignal = protocol.DefaultHaltedSignal
	// WarningSignal carries a Warning (Options.SignalWarnings).
	WarningSignal = history.WarningSignal
)

// Defaults of Options.
const (
	DefaultPollInterval = 2 * time.Second
	DefaultMaxFollowed  = 10000
)

// Options configures a Watcher. Only Client (or Service) and Namespace
// must be set.
type Options struct {
	// Client is the client the watcher talks to the server with; Service,
	// if set, is used instead (its WorkflowService).
	Client  client.Client
	Service workflowservice.WorkflowServiceClient
	// Namespace is the namespace watched. Default "default".
	Namespace string
	// Query is the visibility query selecting the executions to follow;
	// the watcher adds that they run (ExecutionStatus "Running" or
	// "Paused"). Default: every execution.
	Query string
	// Guard is the policy judged with, as analyze takes it. Under its
	// OnHalt pause (the default) or fail a halt pauses the execution;
	// under observe it is only logged, counted and listed. Default: the
	// guard's defaults.
	Guard interceptor.Options
	// OnPauseRefused is what a halt does when the server refuses Workflow
	// Pause. Default FallbackSignal.
	OnPauseRefused Fallback
	// SignalWarnings signals each warning to its workflow as
	// loop.warning (WarningSignal), with the Warning as JSON. Default
	// false: warnings are logged, counted and listed only.
	SignalWarnings bool
	// Identity is the identity of the watcher's pauses and signals.
	// Default "loopguard-watch@<host>".
	Identity string
	// Shard is the slice of workflow ids followed. Default: all.
	Shard Shard
	// PollInterval is how often the query is listed again for new
	// executions. Default DefaultPollInterval (2s).
	PollInterval time.Duration
	// MaxFollowed is the most executions followed at once; more are left
	// for later listings. Default DefaultMaxFollowed (10000).
	MaxFollowed int
	// Logger logs warnings, halts, pauses and refusals. Default: none.
	Logger *zap.Logger
	// Metrics receives the watcher's counters and gauges. Default: none.
	Metrics client.MetricsHandler
	// DataConverter decodes the histories' payloads: the workers' data
	// converter, with their codecs (converter.NewRemoteDataConverter for
	// a codec server). Without it, results a codec encoded cannot be
	// read: the judgement reports them as problems (logged, listed in
	// Status) and sees no result there. Default: the SDK's default.
	DataConverter converter.DataConverter
}

func (o Options) withDefaults() (Options, error) {
	if o.Service == nil {
		if o.Client == nil {
			return o, errors.New("watch: Options.Client is nil")
		}
		o.Service = o.Client.WorkflowService()
	}
	if o.Namespace == "" {
		o.Namespace = client.DefaultNamespace
	}
	if o.OnPauseRefused < FallbackSignal || o.OnPauseRefused > FallbackObserve {
		return o, fmt.Errorf("watch: Options.OnPauseRefused: %v is not a fallback", o.OnPauseRefused)
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = PauseIdentity + "@" + host
	}
	if o.Shard.Count == 0 {
		o.Shard.Count = 1
	}
	if o.Shard.Count < 0 || o.Shard.Index < 0 || o.Shard.Index >= o.Shard.Count {
		return o, fmt.Errorf("watch: Options.Shard: index %d of %d shards", o.Shard.Index, o.Shard.Count)
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.PollInterval < 0 {
		return o, fmt.Errorf("watch: Options.PollInterval %s is negative", o.PollInterval)
	}
	if o.MaxFollowed == 0 {
		o.MaxFollowed = DefaultMaxFollowed
	}
	if o.MaxFollowed < 0 {
		return o, fmt.Errorf("watch: Options.MaxFollowed %d is negative", o.MaxFollowed)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Metrics == nil {
		o.Metrics = client.MetricsNopHandler
	}
	if _, err := newReader(o.Guard, o.DataConverter); err != nil {
		return o, fmt.Errorf("watch: Options.Guard: %w", err)
	}
	return o, nil
}
