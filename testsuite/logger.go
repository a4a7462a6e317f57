package testsuite

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/log"
)

// testLogger writes warnings and errors to t.Log until done is set: the
// test environment's goroutines may log after Run returns, when t.Log
// would panic.
type testLogger struct {
	t    testing.TB
	done *atomic.Bool
}

func newTestLogger(t testing.TB, done *atomic.Bool) log.Logger {
	return &testLogger{t: t, done: done}
}

func (l *testLogger) Debug(string, ...any) {}
func (l *testLogger) Info(string, ...any)  {}
func (l *testLogger) Warn(msg string, kv ...any) {
	l.log("WARN", msg, kv)
}
func (l *testLogger) Error(msg string, kv ...any) {
	l.log("ERROR", msg, kv)
}

func (l *testLogger) log(level, msg string, kv []any) {
	if l.done.Load() || strings.HasPrefix(msg, "loopguard: could not raise loop.halted") {
		// The test environment has no client for the guard's loop.halted
		// signal: that warning is expected on every halt.
		return
	}
	var b strings.Builder
	b.WriteString(level)
	b.WriteString(" ")
	b.WriteString(msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	l.t.Log(b.String())
}
