package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// testContext bounds a test that talks to a server.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// testLogWriter passes log lines to t.Log until the test ends, then drops
// them: server and worker goroutines may still log while they stop.
type testLogWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func newTestLogWriter(t *testing.T) *testLogWriter {
	w := &testLogWriter{t: t}
	// Registered first, so it runs last, after the servers have stopped.
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return w
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

// testLogger logs at level and above to the test log.
func testLogger(t *testing.T, level zapcore.Level) *zap.Logger {
	return newLogger(newTestLogWriter(t), zap.NewAtomicLevelAt(level), "console")
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// noEnv is a getenv that finds nothing.
func noEnv(string) string { return "" }
