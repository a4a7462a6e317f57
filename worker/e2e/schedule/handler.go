package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// HandlerTagPrefix starts the tag of every call a halt handler makes.
const HandlerTagPrefix = "handler-"

// handlerSleep is how long a handler of kind sleep sleeps: far longer
// than the driver takes to answer the halt it sees.
const handlerSleep = 2 * time.Second

// repeatCalls is how many calls a handler of kind repeat makes: more than
// any profile lets a node repeat.
const repeatCalls = 4

// setHandler registers the plan's halt handler, if it has one.
func (in *interp) setHandler(ctx workflow.Context) error {
	if len(in.handlers) == 0 {
		return nil
	}
	if err := interceptor.SetHaltHandler(ctx, in.handle); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "NotGuarded", err)
	}
	return nil
}

// handle is the halt handler: it does what the plan says for the halt's
// seq, and notes what it returned for the driver.
func (in *interp) handle(ctx workflow.Context, h protocol.HaltEvent) (d interceptor.HandlerDecision, err error) {
	kind := HandlerFor(in.handlers, h.Seq)
	defer func() {
		// A panic goes on to the guard, noted as handing the halt over.
		note := Handled{Seq: h.Seq, Took: workflow.Now(ctx).Sub(h.WorkflowTime)}
		if err == nil {
			note.Action = d.Action
		}
		in.handled = append(in.handled, note)
	}()
	tag := fmt.Sprintf("%s%d-%s", HandlerTagPrefix, h.Seq, kind)
	resume := interceptor.HandlerDecision{Action: protocol.ActionResume, Reason: "handler " + string(kind), Guidance: HandlerGuidance(kind, h.Seq)}
	switch kind {
	case HandlerReview:
		var r AgentResult
		if err := workflow.ExecuteActivity(activityContext(ctx), ReviewNode, AgentInput{Tag: tag, Output: resume.Guidance}).Get(ctx, &r); err != nil {
			return interceptor.HandlerDecision{}, err
		}
		resume.Guidance = r.Output
		return resume, nil
	case HandlerEscalate:
		return interceptor.HandlerDecision{Action: protocol.ActionEscalate, Reason: "handler escalate"}, nil
	case HandlerError:
		return interceptor.HandlerDecision{}, errors.New("handler error: the reviewer is unavailable")
	case HandlerPanic:
		panic("handler panic: a bug in the workflow's halt handler")
	case HandlerUnknown:
		return interceptor.HandlerDecision{Action: "retry-later", Reason: "handler unknown"}, nil
	case HandlerRepeat:
		for i := range repeatCalls {
			args := AgentInput{Tag: fmt.Sprintf("%s-%d", tag, i), Output: "handler same output"}
			var f workflow.Future
			switch {
			case slices.Contains(ActivityNodes, h.Node):
				f = workflow.ExecuteActivity(activityContext(ctx), h.Node, args)
			case slices.Contains(LocalNodes, h.Node):
				f = workflow.ExecuteLocalActivity(localContext(ctx), h.Node, args)
			default:
				f = workflow.ExecuteActivity(activityContext(ctx), ActivityNodes[0], args)
			}
			if err := f.Get(ctx, nil); err != nil && ctx.Err() != nil {
				return interceptor.HandlerDecision{}, err
			}
		}
		return resume, nil
	case HandlerSleep:
		if err := workflow.Sleep(ctx, handlerSleep); err != nil {
			return interceptor.HandlerDecision{}, err
		}
		return resume, nil
	case HandlerSlow, HandlerSlowEscalate:
		if err := workflow.Sleep(ctx, HandlerSlowSleep); err != nil {
			return interceptor.HandlerDecision{}, err
		}
		if kind == HandlerSlowEscalate {
			return interceptor.HandlerDecision{Action: protocol.ActionEscalate, Reason: "handler slow-escalate"}, nil
		}
		return resume, nil
	case HandlerOversize:
		return resume, nil
	}
	return interceptor.HandlerDecision{}, nil // HandlerHuman
}

// NoticeSeen is what one activity or local activity call saw of the
// guard's notice (interceptor.NoticeFrom).
type NoticeSeen struct {
	Tag    string
	Node   string
	Local  bool
	Notice *protocol.Notice // nil: none
	// Bytes is the size of the notice header's payload.
	Bytes int
}

// notices are the notices the calls saw, by the id of the workflow that
// made them: the activities run in the test's process.
var notices = struct {
	sync.Mutex
	m map[string][]NoticeSeen
}{m: map[string][]NoticeSeen{}}

// recordNotice notes the notice of the activity running with ctx.
func recordNotice(ctx context.Context, tag string) {
	info := activity.GetInfo(ctx)
	s := NoticeSeen{Tag: tag, Node: info.ActivityType.Name, Local: info.IsLocalActivity}
	if n, ok := interceptor.NoticeFrom(ctx); ok {
		s.Notice = &n
	}
	if p := sdkinterceptor.Header(ctx)[protocol.NoticeHeader]; p != nil {
		s.Bytes = proto.Size(p)
	}
	notices.Lock()
	defer notices.Unlock()
	id := info.WorkflowExecution.ID
	notices.m[id] = append(notices.m[id], s)
}

// NoticesOf returns the notices the activity calls of workflow id saw (its
// runs' calls, not its children's).
func NoticesOf(id string) []NoticeSeen {
	notices.Lock()
	defer notices.Unlock()
	return slices.Clone(notices.m[id])
}

// IsHandlerCall reports whether a call's tag is one of a halt handler's.
func IsHandlerCall(tag string) bool { return strings.HasPrefix(tag, HandlerTagPrefix) }
