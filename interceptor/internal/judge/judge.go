// Package judge is the guard's judgement of one workflow execution fed
// from its history rather than lived: the analysis of past histories
// (package interceptor/history, behind `worker analyze`) and the watcher
// of running ones (`worker watch`) read events into it. It is internal:
// users read an analysis, not a Judge.
package judge

import (
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/internal/judgehook"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Judge is one judgement, with the live guard's own core: the node name,
// the reading of results and errors, the detectors, the warning rung, the
// halt and its ends, the guard's own input and outside input, in the
// order the guard runs them, turned into verdicts; only the commands a
// guard would issue (signals, memo, pauses) are left out. Each method's
// doc is on its implementation, package interceptor's judge.
//
// A Judge is fed in history order: Now before each workflow task, Call
// for each guarded call scheduled, Result when its result is in, Signal,
// Update, Timer, EndRun and NextRun; when it follows a recorded history
// (Pin), also Attempt, Handled, Cancel and PauseTimedOut, the ends of its
// halts. It is not safe for concurrent use.
type Judge interface {
	Start(info *workflow.Info, now time.Time) bool
	Pin(version int, decode func(ptr any) error) error
	Restore(decode func(ptr any) error) error
	Guarded() bool
	Version() int
	MemoKey() string

	Now(now time.Time)
	Node(kind interceptor.CallKind, typ string, args []any) string
	Call(kind interceptor.CallKind, typ string, args []any) int
	Result(id int, result *commonpb.Payloads, err error, dc converter.DataConverter)
	Signal(name string, p *commonpb.Payload) bool
	Update(name string, p *commonpb.Payload) bool
	OnRefused(fn func(name string, p *commonpb.Payload, err error))
	Deliver()
	Wake()
	Idle()
	Timer()
	EndRun()
	NextRun(info *workflow.Info, now time.Time)

	Attempt(node string)
	Blocked() bool
	Held() int
	Handled(action protocol.Action, guidance string) bool
	Resumed(ev protocol.HaltEvent, by, reason string, at time.Time) bool
	Cancel()
	PauseTimer(d time.Duration) bool
	PauseTimedOut()
	Ahead() (ev protocol.HaltEvent, policy protocol.OnHalt, ok bool)

	Calls() int
	Verdicts() []interceptor.Verdict
	Judged() []interceptor.Verdict
	Logs() []string
}

// New returns a Judge under opts, for executions started with the guard
// as it is now; opts are checked as interceptor.New checks them.
func New(opts interceptor.Options) (Judge, error) {
	j, err := judgehook.New(opts)
	if err != nil {
		return nil, err
	}
	return j.(Judge), nil
}
