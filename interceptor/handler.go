package interceptor

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"go.temporal.io/sdk/workflow"
)

// HaltHandler is workflow code that runs at a halt, before a human is
// asked (OnHalt pause). It is deterministic workflow
// code like the rest of the workflow: it may call activities or a
// reviewer child workflow, and change what the workflow's next calls do.
// Its own calls are not guarded: they can neither halt nor wait on the
// halt it handles. Other branches' calls wait until it decides.
type HaltHandler func(ctx workflow.Context, halt protocol.HaltEvent) (HandlerDecision, error)

// HandlerDecision is what a halt handler decides. Action ActionResume
// resumes the loop, with Guidance for the agent if given; ActionEscalate
// escalates it; an empty Action (or an error, or a panic) hands the halt
// to a human, as without a handler.
type HandlerDecision struct {
	Action   protocol.Action `json:"action,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Guidance string          `json:"guidance,omitempty"`
}

// HandlerBy is the Decision.By of a handler's decision.
const HandlerBy = "halt handler"

// decision is hd as the decision that ends halt seq.
func (hd HandlerDecision) decision(seq int) protocol.Decision {
	return protocol.Decision{Action: hd.Action, Reason: hd.Reason, By: HandlerBy, HaltSeq: seq, Guidance: hd.Guidance}
}

type guardKey struct{}

type handlerCallKey struct{}

// ErrNotGuarded is returned by SetHaltHandler in a workflow the guard
// does not guard (not selected, or started before the guard was installed). Its most
// common cause is a workflow type Options.Workflows does not name exactly:
// return it rather than discard it (see CheckWorkflows).
var ErrNotGuarded = errors.New("loopguard: this workflow is not guarded " +
	"(does Options.Workflows name its type exactly? Is the guard registered on this worker?)")

// SetHaltHandler registers h for the workflow of ctx; the last one
// registered wins, and nil removes it. Call it at the start of the
// workflow function.
func SetHaltHandler(ctx workflow.Context, h HaltHandler) error {
	g, _ := ctx.Value(guardKey{}).(*guard)
	if g == nil || !g.active {
		return ErrNotGuarded
	}
	g.handler = h
	return nil
}

// cutUTF8 cuts s to at most n bytes, at a rune boundary, and drops
// invalid bytes.
func cutUTF8(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}

// handlerCall reports whether ctx belongs to a running halt handler, whose
// calls go unguarded.
func handlerCall(ctx workflow.Context) bool {
	return ctx.Value(handlerCallKey{}) != nil
}

// handle runs the workflow's halt handler for ev, if any, racing the
// human (raceHandler).
func (g *guard) handle(ctx workflow.Context, ev protocol.HaltEvent) HandlerDecision {
	g.pause.handling = 0
	return g.raceHandler(ctx, ev)
}

// raceHandler runs the halt handler in its own coroutine and waits for
// whichever comes first: its decision, a human's (signal or update), the
// PauseTimeout, or the workflow's cancellation. A handler that hangs or
// sleeps cannot keep a human from deciding, and its decision after a
// human's is dropped (its coroutine may still be running its calls). On
// PauseTimeout the pause is decided here, as awaitDecision would.
func (g *guard) raceHandler(ctx workflow.Context, ev protocol.HaltEvent) HandlerDecision {
	if g.handler == nil {
		return HandlerDecision{}
	}
	p := &g.pause
	var hd HandlerDecision
	done, overtaken := false, false
	workflow.Go(ctx, func(ctx workflow.Context) {
		hd, done = g.runHandler(ctx, ev), true
		if overtaken && hd.Action != "" {
			g.next.GetLogger(ctx).Info("loopguard: the halt handler decided after the halt ended; its decision is ignored",
				"haltSeq", ev.Seq, "action", hd.Action)
		}
	})
	over := func() bool { return done || p.decision != nil }
	p.deciding = true
	defer func() { p.deciding = false }()
	if g.cfg.PauseTimeout <= 0 {
		_ = workflow.Await(ctx, over) // canceled: the pause's own wait returns the cancellation
	} else {
		began := workflow.Now(ctx)
		ok, err := workflow.AwaitWithTimeout(ctx, g.cfg.PauseTimeout, over)
		p.handling = workflow.Now(ctx).Sub(began)
		if err == nil && !ok {
			g.next.GetLogger(ctx).Warn("loopguard: the halt handler did not decide within the pause timeout", "haltSeq", ev.Seq)
			g.pauseTimedOut()
		}
	}
	if !done || p.decision != nil {
		overtaken = true
		return HandlerDecision{}
	}
	return hd
}

// runHandler runs the workflow's halt handler for ev, if any, and returns
// its decision; a missing handler, an error or a panic asks a human.
func (g *guard) runHandler(ctx workflow.Context, ev protocol.HaltEvent) (d HandlerDecision) {
	if g.handler == nil {
		return HandlerDecision{}
	}
	log := g.next.GetLogger(ctx)
	defer func() {
		if r := recover(); r != nil {
			log.Error("loopguard: halt handler panicked; a human decides", "haltSeq", ev.Seq, "panic", fmt.Sprint(r))
			d = HandlerDecision{}
		}
	}()
	hctx := workflow.WithValue(ctx, handlerCallKey{}, true)
	d, err := g.handler(hctx, ev)
	if err != nil {
		log.Warn("loopguard: halt handler failed; a human decides", "haltSeq", ev.Seq, "error", err)
		return HandlerDecision{}
	}
	switch d.Action {
	case protocol.ActionResume, protocol.ActionEscalate:
		d.Guidance = cutUTF8(d.Guidance, protocol.MaxGuidanceBytes)
		return d
	case "":
		return d
	}
	log.Warn("loopguard: halt handler returned an unknown action; a human decides", "haltSeq", ev.Seq, "action", d.Action)
	return HandlerDecision{}
}
