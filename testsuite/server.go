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
	"github.com/loopguard/loopguard/worker/devserver"
)

// DefaultServerStartTimeout bounds StartServer when opts.StartTimeout is
// zero.
const DefaultServerStartTimeout = 60 * time.Second

// StartServer starts the embedded Temporal server of package devserver for
// an integration test and stops it in t.Cleanup. Unlike devserver.Start's
// defaults, storage is in memory (Ephemeral) unless opts.DataDir is set,
// ports are free ones (FreePorts) unless set, and the start is bounded by
// opts.StartTimeout (default DefaultServerStartTimeout). The Web UI follows
// opts.UIDisabled. It fails t if the server does not start.
func StartServer(t testing.TB, opts devserver.Options) *devserver.Server {
	t.Helper()
	if opts.DataDir == "" {
		opts.Ephemeral = true
	}
	opts.FreePorts = true
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultServerStartTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout+5*time.Second)
	defer cancel()
	srv, err := devserver.Start(ctx, opts)
	if err != nil {
		t.Fatalf("testsuite: start the embedded Temporal server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Logf("testsuite: stop the embedded Temporal server: %v", err)
		}
	})
	return srv
}

// NewClient dials srv and closes the client in t.Cleanup (registered after
// StartServer's, so it runs before the server stops). Its logs are dropped.
func NewClient(t testing.TB, srv *devserver.Server) client.Client {
	t.Helper()
	c, err := srv.NewClient(client.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("testsuite: dial the embedded Temporal server: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

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
func QueryStatus(ctx context.Context, c client.Client, workflowID, runID string) (interceptor.Status, error) {
	return decodeStatus(c.QueryWorkflow(ctx, workflowID, runID, interceptor.DefaultStatusQuery))
}

// decodeStatus decodes the answer of a loop.status query.
func decodeStatus(v converter.EncodedValue, err error) (interceptor.Status, error) {
	if err != nil {
		return interceptor.Status{}, err
	}
	var s interceptor.Status
	if err := v.Get(&s); err != nil {
		return interceptor.Status{}, fmt.Errorf("decode %s: %w", interceptor.DefaultStatusQuery, err)
	}
	return s, nil
}

// WaitStatus polls the workflow's loop.status query until cond holds and
// returns that status, or the last error (or status) when ctx ends.
func WaitStatus(ctx context.Context, c client.Client, workflowID string, cond func(interceptor.Status) bool) (interceptor.Status, error) {
	var last interceptor.Status
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
func Halted(n int) func(interceptor.Status) bool {
	return func(s interceptor.Status) bool {
		return s.State == interceptor.StateHalted && s.Halt != nil && s.Halt.Seq == n
	}
}

func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.DiscardHandler))
}
