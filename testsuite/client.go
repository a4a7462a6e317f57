package testsuite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// WorkerOptions configures StartWorker.
type WorkerOptions struct {
	// Guard is the guard installed on the worker; nil runs the worker
	// without the guard.
	Guard *interceptor.Options
	// Register registers the worker's workflows and activities.
	Register func(r worker.Registry)
	// Options are the worker's other options; Interceptors are kept, the
	// guard is appended.
	Options worker.Options
}

// StartWorker starts a worker on taskQueue, guarded as opts.Guard says, and
// stops it in t.Cleanup (stopping it earlier, to replace it, is fine).
func StartWorker(t testing.TB, c client.Client, taskQueue string, opts WorkerOptions) worker.Worker {
	t.Helper()
	wo := opts.Options
	if opts.Guard != nil {
		g, err := interceptor.New(*opts.Guard)
		if err != nil {
			t.Fatalf("testsuite: invalid guard options: %v", err)
		}
		wo.Interceptors = append(append([]sdkinterceptor.WorkerInterceptor(nil), wo.Interceptors...), g)
	}
	w := worker.New(c, taskQueue, wo)
	if opts.Register != nil {
		opts.Register(w)
	}
	if err := w.Start(); err != nil {
		t.Fatalf("testsuite: start worker on %s: %v", taskQueue, err)
	}
	t.Cleanup(w.Stop)
	return w
}

// QueryStatus asks a running (or closed) workflow for the guard's status
// through the default loop.status query.
func QueryStatus(ctx context.Context, c client.Client, workflowID, runID string) (protocol.Status, error) {
	return decodeStatus(c.QueryWorkflow(ctx, workflowID, runID, protocol.DefaultStatusQuery))
}

// decodeStatus decodes the answer of a loop.status query.
func decodeStatus(v converter.EncodedValue, err error) (protocol.Status, error) {
	if err != nil {
		return protocol.Status{}, err
	}
	var s protocol.Status
	if err := v.Get(&s); err != nil {
		return protocol.Status{}, fmt.Errorf("decode %s: %w", protocol.DefaultStatusQuery, err)
	}
	return s, nil
}

// WaitStatus polls the workflow's loop.status query until cond holds and
// returns that status, or the last error (or status) when ctx ends.
func WaitStatus(ctx context.Context, c client.Client, workflowID string, cond func(protocol.Status) bool) (protocol.Status, error) {
	var last protocol.Status
	var lastErr error
	for {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s, err := QueryStatus(qctx, c, workflowID, "")
		cancel()
		if err == nil {
			last, lastErr = s, nil
			if cond(s) {
				return s, nil
			}
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr == nil {
				lastErr = errors.New("condition not met")
			}
			return last, fmt.Errorf("testsuite: workflow %s: waiting for its status: %w (last state %q, %d halts): %w",
				workflowID, ctx.Err(), last.State, last.Halts, lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Halted is a WaitStatus condition: the workflow is paused on its n-th halt.
func Halted(n int) func(protocol.Status) bool {
	return func(s protocol.Status) bool {
		return s.State == protocol.StateHalted && s.Halt != nil && s.Halt.Seq == n
	}
}

func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.DiscardHandler))
}
