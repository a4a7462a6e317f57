package interceptor

import (
	"errors"
	"math"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// observe reads a finished call of node into what the detectors see: its
// result's bytes data, or its error err, as the driver got them (the
// guard from the call's future, the Judge from the history). canceled
// reports a call that ended canceled, which the core
// abandons (core.result); bad says what was wrong with what the
// ResultHook set, for the driver to log ("" when nothing was).
func (c *core) observe(node string, data []byte, err error) (obs detect.Observation, canceled bool, bad string) {
	if err != nil {
		var can *temporal.CanceledError
		if errors.As(err, &can) {
			return detect.Observation{}, true, ""
		}
		kind, msg := errorKind(err)
		return detect.ExtractError(c.cfg.Policy, kind, msg), false, ""
	}
	obs = detect.Extract(c.cfg.Policy, node, data)
	if c.hooks.resultHook != nil {
		obs, bad = c.applyResultHook(node, data, obs)
	}
	return obs, false, bad
}

// applyResultHook runs the ResultHook on a copy of obs. The hook takes a
// pointer, which escapes: taking it in this function, rather than of
// observation's own variable, keeps the allocation off the calls of
// workflows without a hook.
//
// What the hook returns is checked: a metric or cost that is
// not a finite number (a pass rate of 0/0 is NaN) is dropped, as Extract
// drops one read from JSON. Stored, a NaN best metric is never improved on
// (a converging loop halts with no_improvement), and NaN or ±Inf in a
// halt's evidence cannot be encoded as JSON: loop.halted, the status query
// and the LoopEscalated error would all fail. A hook that panics is
// recovered: the guard reads the result without it rather than fail every
// workflow task of every guarded workflow. What was wrong ("" when
// nothing) is the driver's to log.
func (c *core) applyResultHook(node string, data []byte, obs detect.Observation) (detect.Observation, string) {
	return c.runResultHook(node, data, obs)
}

// runResultHook runs the hook on a copy of obs and makes what it set safe
// to store. It returns obs itself when the hook panicked, and says what was
// wrong ("" when nothing was).
func (c *core) runResultHook(node string, data []byte, obs detect.Observation) (refined detect.Observation, bad string) {
	defer func() {
		if r := recover(); r != nil {
			refined, bad = obs, "panicked: the result is read without it"
		}
	}()
	refined = obs
	c.hooks.resultHook(node, data, &refined)
	if refined.HasMetric && !finite(refined.Metric) {
		refined.HasMetric, refined.Metric = false, 0
		bad = "set a metric that is not a finite number: dropped"
	}
	if !finite(refined.Cost) {
		refined.Cost = 0
		bad = "set a cost that is not a finite number: dropped"
	}
	refined.ProgressRaw = strings.ToValidUTF8(refined.ProgressRaw, "\ufffd")
	return refined, bad
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}

// errorKind names an error for its signature: the application error type,
// or the Temporal failure kind, and its message without wrapper noise.
func errorKind(err error) (kind, msg string) {
	var app *temporal.ApplicationError
	var timeout *temporal.TimeoutError
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var panicked *temporal.PanicError
	switch {
	case errors.As(err, &app):
		return nonEmptyOr(app.Type(), "error"), app.Message()
	case errors.As(err, &timeout):
		return "timeout", timeout.TimeoutType().String()
	case errors.As(err, &canceled):
		return "canceled", canceled.Error()
	case errors.As(err, &terminated):
		return "terminated", terminated.Error()
	case errors.As(err, &panicked):
		return "panic", panicked.Error()
	}
	return "error", err.Error()
}

func nonEmptyOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
