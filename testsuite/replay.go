package testsuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// ReplayOptions configures ReplayFile and ReplayHistory.
type ReplayOptions struct {
	// Guard configures the guard installed on the replayer. Replay must
	// succeed whatever it says: each guarded execution replays with the
	// options pinned in its history, and executions recorded without the
	// guard are left alone.
	Guard interceptor.Options
	// Unguarded replays without the guard. A history in which the guard
	// halted the workflow then fails to replay: use it to show that.
	Unguarded bool
	// Workflows are the workflow functions to register on the replayer.
	Workflows []any
	// Register registers workflows on the replayer, for names and options
	// Workflows cannot express (e.g. fixtures.RegisterWorkflows).
	Register func(r worker.WorkflowRegistry)
	// DataConverter is the workers' data converter (with their codecs), for
	// histories recorded with one. Default: the SDK's default converter.
	DataConverter converter.DataConverter
	// Logger receives the replayer's logs (a failed replay logs its panic
	// and stack trace). Default: none.
	Logger log.Logger
	// DeadlockDetection turns on the SDK's deadlock detector, which fails
	// a workflow task whose code runs for a second without yielding.
	// Default: off. A replay checks determinism, and a loaded CI machine
	// can stall correct workflow code for a second (TMPRL1101, "Potential
	// deadlock detected"), a failure that says nothing about the history.
	DeadlockDetection bool
}

// ReplayError is the error of a replay that failed.
type ReplayError struct {
	// File is the history file, when the history came from one.
	File string
	// WorkflowType and WorkflowID are read from the history's first event.
	WorkflowType string
	WorkflowID   string
	// Nondeterministic is true when the workflow code did not produce the
	// commands the history holds.
	Nondeterministic bool
	// Guarded is true when the history was recorded with the guard (it
	// holds the guard's version marker); Halts counts the loop.halted
	// signals in it.
	Guarded bool
	Halts   int
	// ReplayedWithGuard says whether the guard was installed on the replayer.
	ReplayedWithGuard bool
	// Err is the replayer's error.
	Err error
}

// Error gives the file, the workflow, the replayer's error and, for
// non-determinism, the usual causes.
func (e *ReplayError) Error() string {
	var b strings.Builder
	b.WriteString("loopguard replay failed")
	if e.File != "" {
		fmt.Fprintf(&b, " for %s", e.File)
	}
	fmt.Fprintf(&b, " (workflow type %q, workflow id %q): %v", e.WorkflowType, e.WorkflowID, e.Err)
	if !e.Nondeterministic {
		if strings.Contains(fmt.Sprint(e.Err), "unable to find workflow type") {
			b.WriteString("\nhint: register the workflow on the replayer (ReplayOptions.Workflows or Register)")
		}
		return b.String()
	}
	b.WriteString("\nThe workflow code did not replay the commands in this history (non-determinism). Usual causes:")
	if e.Guarded && !e.ReplayedWithGuard {
		fmt.Fprintf(&b, "\n  - this history was recorded with loopguard; install the guard (or its retire mode) on the replayer, and on every worker that may pick the workflow up (its version marker and pinned options are in it, and %d halt(s); see docs/rollback.md)", e.Halts)
	} else {
		b.WriteString("\n  - the guard is missing from the replayer while the history was recorded with it, or the reverse for a halted history")
	}
	b.WriteString("\n  - the workflow code changed in a way that changes its commands (activities, timers, child workflows, their order): guard the change with workflow.GetVersion")
	b.WriteString("\n  - the workflow code is not deterministic (map iteration, time.Now, goroutines, random numbers outside workflow APIs)")
	b.WriteString("\n  - a NodeName or ResultHook function of the guard changed: they are code, not pinned options")
	return b.String()
}

// Unwrap returns the replayer's error.
func (e *ReplayError) Unwrap() error { return e.Err }

// ReplayFile replays the JSON history at path, as exported by
// `temporal workflow show --output json` or ExportHistoryFile, on a replayer
// with the guard installed (unless opts.Unguarded). It returns nil, or a
// *ReplayError that names the file and the workflow and explains the usual
// causes of non-determinism.
func ReplayFile(path string, opts ReplayOptions) error {
	h, err := ReadHistoryFile(path)
	if err != nil {
		return err
	}
	err = ReplayHistory(h, opts)
	var re *ReplayError
	if errors.As(err, &re) {
		re.File = path
	}
	return err
}

// RequireReplayFile is ReplayFile for tests: it fails t at once with the
// replay error.
func RequireReplayFile(t testing.TB, path string, opts ReplayOptions) {
	t.Helper()
	if err := ReplayFile(path, opts); err != nil {
		t.Fatal(err)
	}
}

// RequireReplayDir replays every *.json history in dir, each in a subtest
// named after the file (t must be a *testing.T for subtests; with another
// testing.TB the files replay in turn). It fails when dir holds none.
func RequireReplayDir(t testing.TB, dir string, opts ReplayOptions) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var histories []string
	for _, f := range files {
		if filepath.Base(f) != "manifest.json" {
			histories = append(histories, f)
		}
	}
	if len(histories) == 0 {
		t.Fatalf("no *.json histories in %s", dir)
	}
	sort.Strings(histories)
	for _, f := range histories {
		if tt, ok := t.(*testing.T); ok {
			tt.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
				RequireReplayFile(t, f, opts)
			})
			continue
		}
		RequireReplayFile(t, f, opts)
	}
}

// ReplayHistory replays h like ReplayFile.
func ReplayHistory(h *historypb.History, opts ReplayOptions) error {
	r, err := NewReplayer(opts)
	if err != nil {
		return err
	}
	info := InspectWith(h, opts.DataConverter)
	// Replay under the recorded workflow id: the SDK's replayer otherwise
	// uses "ReplayId", and workflows that derive ids from their own (child
	// workflow ids, say) would not replay.
	logger := opts.Logger
	if logger == nil {
		// The replayer logs a failed replay's panic and stack at error
		// level; the ReplayError says all that matters.
		logger = quietLogger()
	}
	err = r.ReplayWorkflowHistoryWithOptions(logger, h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: info.WorkflowID},
	})
	if err == nil {
		return nil
	}
	msg := err.Error()
	return &ReplayError{
		WorkflowType:      info.WorkflowType,
		WorkflowID:        info.WorkflowID,
		Nondeterministic:  strings.Contains(msg, "TMPRL1100") || strings.Contains(strings.ToLower(msg), "nondeterministic"),
		Guarded:           info.Guarded,
		Halts:             info.HaltedSignals,
		ReplayedWithGuard: !opts.Unguarded,
		Err:               err,
	}
}

// NewReplayer returns a workflow replayer with the guard installed (unless
// opts.Unguarded) and opts' workflows registered, for callers that replay
// many histories (a benchmark) or need the SDK's other replay methods.
func NewReplayer(opts ReplayOptions) (worker.WorkflowReplayer, error) {
	ro := worker.WorkflowReplayerOptions{DataConverter: opts.DataConverter, DisableDeadlockDetection: !opts.DeadlockDetection}
	if !opts.Unguarded {
		g, err := interceptor.New(opts.Guard)
		if err != nil {
			return nil, fmt.Errorf("testsuite: invalid guard options: %w", err)
		}
		ro.Interceptors = []sdkinterceptor.WorkerInterceptor{g}
	}
	r, err := worker.NewWorkflowReplayerWithOptions(ro)
	if err != nil {
		return nil, err
	}
	for _, w := range opts.Workflows {
		r.RegisterWorkflow(w)
	}
	if opts.Register != nil {
		opts.Register(r)
	}
	return r, nil
}

// HistoryInfo is what Inspect reads from a history.
type HistoryInfo struct {
	WorkflowType string
	WorkflowID   string
	Events       int
	// Guarded is true when the guard's version marker is in the history:
	// the execution runs with the guard. GuardVersion is the marker's
	// version: the guard release's behaviour the execution is pinned to.
	Guarded      bool
	GuardVersion int
	// HaltedSignals counts the loop.halted signals in the history (one per
	// halt the guard raised).
	HaltedSignals int
	// WorkflowTaskFailures counts WorkflowTaskFailed events: a healthy
	// history has none.
	WorkflowTaskFailures int
	// ContinuedAsNew is true when the run ended by continuing as new.
	ContinuedAsNew bool
	// Closed is true when the history ends with a close event.
	Closed bool
}

// Inspect summarises h: workflow type and id, whether the guard ran, how
// many halts it raised, and whether any workflow task failed.
func Inspect(h *historypb.History) HistoryInfo {
	return InspectWith(h, nil)
}

// InspectWith is Inspect for a history recorded with dc (nil: the default
// converter): the version marker is encoded with the workers' converter.
func InspectWith(h *historypb.History, dc converter.DataConverter) HistoryInfo {
	var info HistoryInfo
	info.Events = len(h.GetEvents())
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	for _, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a := e.GetWorkflowExecutionStartedEventAttributes()
			info.WorkflowType = a.GetWorkflowType().GetName()
			info.WorkflowID = a.GetWorkflowId()
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			a := e.GetMarkerRecordedEventAttributes()
			if p := a.GetDetails()["change-id"]; p != nil && len(p.GetPayloads()) > 0 {
				var id string
				if dc.FromPayload(p.GetPayloads()[0], &id) == nil && id == "loopguard" {
					info.Guarded = true
					if v := a.GetDetails()["version"]; v != nil && len(v.GetPayloads()) > 0 {
						_ = dc.FromPayload(v.GetPayloads()[0], &info.GuardVersion)
					}
				}
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == protocol.DefaultHaltedSignal {
				info.HaltedSignals++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			info.WorkflowTaskFailures++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			info.ContinuedAsNew, info.Closed = true, true
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
			info.Closed = true
		}
	}
	return info
}

// ReadHistoryFile reads a JSON history: see history.ReadHistoryFile.
func ReadHistoryFile(path string) (*historypb.History, error) { return history.ReadHistoryFile(path) }

// MarshalHistory encodes h as indented protojson, the format of
// `temporal workflow show --output json`.
func MarshalHistory(h *historypb.History) ([]byte, error) {
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteHistoryFile writes h to path as indented protojson.
func WriteHistoryFile(path string, h *historypb.History) error {
	data, err := MarshalHistory(h)
	if err != nil {
		return fmt.Errorf("testsuite: encode history: %w", err)
	}
	return os.WriteFile(path, data, 0o644)
}

// ExportHistory fetches the full history of a workflow run (runID "" means
// the latest run) from c, page by page: see history.ExportHistory.
func ExportHistory(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	return history.ExportHistory(ctx, c, workflowID, runID)
}

// ExportHistoryFile exports a workflow run's history to path, for
// ReplayFile: the same format as `temporal workflow show --output json`.
func ExportHistoryFile(ctx context.Context, c client.Client, workflowID, runID, path string) error {
	h, err := ExportHistory(ctx, c, workflowID, runID)
	if err != nil {
		return err
	}
	return WriteHistoryFile(path, h)
}
