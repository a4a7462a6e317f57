package devserver

import (
	"fmt"
	"strings"
	"sync/atomic"

	sdklog "go.temporal.io/sdk/log"
	serverlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// serverLogger adapts a *zap.Logger to the server's log.Logger with its own
// minimum level. Once quiet is set (Stop does it), it drops everything: a
// stopping server logs dozens of warnings and errors about cancelled polls
// and refused connections that mean nothing. Unlike the server's zap adapter it never calls os.Exit: a
// Fatal logs at error level and panics with a *fatalError, which Start
// recovers when it happens on Start's goroutine (for example a listener that
// cannot bind).
type serverLogger struct {
	zl    *zap.Logger
	min   zapcore.Level
	quiet *atomic.Bool
}

var (
	_ serverlog.Logger     = serverLogger{}
	_ serverlog.WithLogger = serverLogger{}
)

// fatalError is the panic value of serverLogger.Fatal.
type fatalError struct{ msg string }

func (e *fatalError) Error() string { return "temporal server fatal error: " + e.msg }

func newServerLogger(zl *zap.Logger, min zapcore.Level, quiet *atomic.Bool) serverLogger {
	return serverLogger{zl: zl.WithOptions(zap.AddCallerSkip(1)), min: min, quiet: quiet}
}

func (l serverLogger) log(lvl zapcore.Level, msg string, tags []tag.Tag) {
	if lvl < l.min || l.quiet.Load() {
		return
	}
	if ce := l.zl.Check(lvl, msg); ce != nil {
		ce.Write(zapFields(tags)...)
	}
}

func zapFields(tags []tag.Tag) []zap.Field {
	fields := make([]zap.Field, 0, len(tags))
	for _, t := range tags {
		fields = append(fields, zap.Any(t.Key(), t.Value()))
	}
	return fields
}

func (l serverLogger) Debug(msg string, tags ...tag.Tag)  { l.log(zapcore.DebugLevel, msg, tags) }
func (l serverLogger) Info(msg string, tags ...tag.Tag)   { l.log(zapcore.InfoLevel, msg, tags) }
func (l serverLogger) Warn(msg string, tags ...tag.Tag)   { l.log(zapcore.WarnLevel, msg, tags) }
func (l serverLogger) Error(msg string, tags ...tag.Tag)  { l.log(zapcore.ErrorLevel, msg, tags) }
func (l serverLogger) DPanic(msg string, tags ...tag.Tag) { l.log(zapcore.ErrorLevel, msg, tags) }

func (l serverLogger) Panic(msg string, tags ...tag.Tag) {
	l.log(zapcore.ErrorLevel, msg, tags)
	panic(msg)
}

func (l serverLogger) Fatal(msg string, tags ...tag.Tag) {
	l.log(zapcore.ErrorLevel, msg, tags)
	panic(&fatalError{msg: withTags(msg, tags)})
}

func (l serverLogger) With(tags ...tag.Tag) serverlog.Logger {
	return serverLogger{zl: l.zl.With(zapFields(tags)...), min: l.min, quiet: l.quiet}
}

func withTags(msg string, tags []tag.Tag) string {
	var b strings.Builder
	b.WriteString(msg)
	for _, t := range tags {
		fmt.Fprintf(&b, " %s=%v", t.Key(), t.Value())
	}
	return b.String()
}

// sdkLogger adapts a *zap.Logger to the SDK's log.Logger.
type sdkLogger struct{ s *zap.SugaredLogger }

var _ sdklog.Logger = sdkLogger{}

func newSDKLogger(zl *zap.Logger) sdkLogger {
	return sdkLogger{s: zl.WithOptions(zap.AddCallerSkip(1)).Sugar()}
}

func (l sdkLogger) Debug(msg string, kv ...any) { l.s.Debugw(msg, kv...) }
func (l sdkLogger) Info(msg string, kv ...any)  { l.s.Infow(msg, kv...) }
func (l sdkLogger) Warn(msg string, kv ...any)  { l.s.Warnw(msg, kv...) }
func (l sdkLogger) Error(msg string, kv ...any) { l.s.Errorw(msg, kv...) }
