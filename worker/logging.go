package main

import (
	"io"

	sdklog "go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger returns a zap logger writing to w at the given (adjustable)
// level: one line per entry, ISO-8601 timestamps, no stack traces and no
// sampling. format is "console" or "json".
func newLogger(w io.Writer, level zap.AtomicLevel, format string) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	enc.EncodeDuration = zapcore.StringDurationEncoder
	var encoder zapcore.Encoder
	if format == "json" {
		encoder = zapcore.NewJSONEncoder(enc)
	} else {
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		enc.ConsoleSeparator = "  "
		encoder = zapcore.NewConsoleEncoder(enc)
	}
	core := zapcore.NewCore(encoder, zapcore.Lock(zapcore.AddSync(w)), level)
	return zap.New(core, zap.ErrorOutput(zapcore.Lock(zapcore.AddSync(w))))
}

// sdkLogger adapts a *zap.Logger to the Temporal SDK's log.Logger, for the
// client, the worker and the workflows' and activities' loggers. Key-value
// pairs become zap fields.
type sdkLogger struct{ s *zap.SugaredLogger }

var (
	_ sdklog.Logger          = sdkLogger{}
	_ sdklog.WithLogger      = sdkLogger{}
	_ sdklog.WithSkipCallers = sdkLogger{}
)

func newSDKLogger(l *zap.Logger) sdkLogger {
	return sdkLogger{s: l.WithOptions(zap.AddCallerSkip(1)).Sugar()}
}

func (l sdkLogger) Debug(msg string, keyvals ...any) { l.s.Debugw(msg, keyvals...) }
func (l sdkLogger) Info(msg string, keyvals ...any)  { l.s.Infow(msg, keyvals...) }
func (l sdkLogger) Warn(msg string, keyvals ...any)  { l.s.Warnw(msg, keyvals...) }
func (l sdkLogger) Error(msg string, keyvals ...any) { l.s.Errorw(msg, keyvals...) }

// With returns a logger that adds keyvals to every entry.
func (l sdkLogger) With(keyvals ...any) sdklog.Logger {
	return sdkLogger{s: l.s.With(keyvals...)}
}

// WithCallerSkip returns a logger that skips depth more stack frames when
// reporting the caller (when the caller is reported at all).
func (l sdkLogger) WithCallerSkip(depth int) sdklog.Logger {
	return sdkLogger{s: l.s.WithOptions(zap.AddCallerSkip(depth))}
}
