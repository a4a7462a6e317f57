package devtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

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
		t.Fatalf("devtest: start the embedded Temporal server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Logf("devtest: stop the embedded Temporal server: %v", err)
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
		t.Fatalf("devtest: dial the embedded Temporal server: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.DiscardHandler))
}
