package interceptor

import (
	"context"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// NoticeHeader is the header that carries a Notice to a guarded call, as
// sdk-go's tracing interceptor carries its span context: a JSON payload of
// the default data converter (payload codecs do not see headers, so do not
// put secrets in guidance).
const NoticeHeader = "loopguard-notice"

// MaxGuidanceBytes bounds a resume's guidance, in bytes of UTF-8, so that
// the notice header stays small. Its JSON writes <, >, &, U+2028, U+2029
// and control characters as 6-byte escapes, so 512 bytes of guidance take
// up to 3 KiB of header; a warning in force adds its own.
const MaxGuidanceBytes = 512

// Notice is what the guard has to tell a guarded call: the human's
// guidance from the last resume, for the calls of the loop that halted.
// A call with nothing to be told carries no header.
type Notice struct {
	// Warning is the warning in force for the loop the call belongs to
	// (Options.Warnings).
	Warning *Warning `json:"warning,omitempty"`
	// Guidance is the text of the resume that answered the loop's last
	// halt, and who sent it.
	Guidance string `json:"guidance,omitempty"`
	By       string `json:"by,omitempty"`
	// HaltSeq is the halt the guidance answered.
	HaltSeq int `json:"haltSeq,omitempty"`
}

// Guidance is the guidance in force, as Status shows it.
type Guidance struct {
	Text    string `json:"text"`
	By      string `json:"by,omitempty"`
	HaltSeq int    `json:"haltSeq"`
	// Nodes are the nodes whose calls carry it: the halted cycle's
	// members, or the halted node.
	Nodes []string `json:"nodes"`
}

type noticeKey struct{}

// NoticeFrom returns the notice of the activity running with ctx. The
// worker that runs the activity must have the guard registered (New or
// NewPlugin, any Options): its activity interceptor reads the header.
func NoticeFrom(ctx context.Context) (Notice, bool) {
	n, ok := ctx.Value(noticeKey{}).(Notice)
	return n, ok
}

// WorkflowNotice returns the notice a child workflow was started with.
func WorkflowNotice(ctx workflow.Context) (Notice, bool) {
	if n, ok := ctx.Value(noticeKey{}).(Notice); ok {
		return n, true
	}
	return readNotice(sdkinterceptor.WorkflowHeader(ctx))
}

// readNotice decodes the notice header, if any. A header that does not
// decode is no notice.
func readNotice(h map[string]*commonpb.Payload) (Notice, bool) {
	p := h[NoticeHeader]
	if p == nil {
		return Notice{}, false
	}
	var n Notice
	if err := converter.GetDefaultDataConverter().FromPayload(p, &n); err != nil {
		return Notice{}, false
	}
	return n, true
}

// notice returns what the next call of node must be told.
func (g *guard) notice(node string) (Notice, bool) {
	var n Notice
	ok := false
	if w := g.pause.warning(); w != nil && slices.Contains(w.Nodes, node) {
		n.Warning, ok = w, true
	}
	if gd := g.guidance; gd != nil && slices.Contains(gd.Nodes, node) {
		n.Guidance, n.By, n.HaltSeq, ok = gd.Text, gd.By, gd.HaltSeq, true
	}
	return n, ok
}

// setNotice writes the notice of the call of node about to be made into
// the workflow's outgoing header, or removes an earlier one (version 7).
func (g *guard) setNotice(ctx workflow.Context, node string) {
	if g.version < versionGuidance {
		return
	}
	g.heed(ctx, node)
	n, ok := g.notice(node)
	if !ok && !g.noticed {
		return // nothing to say and no notice to take back: the common call costs nothing more
	}
	h := sdkinterceptor.WorkflowHeader(ctx)
	if h == nil {
		return
	}
	var p *commonpb.Payload
	if ok {
		p, _ = converter.GetDefaultDataConverter().ToPayload(n) // a Notice always encodes
	}
	if p == nil {
		delete(h, NoticeHeader)
		g.noticed = false
		return
	}
	h[NoticeHeader] = p
	g.noticed = true
}

// guide puts the guidance of a resume in force for the loop of trip.
func (g *guard) guide(ev HaltEvent, d Decision) {
	if g.version < versionGuidance {
		return
	}
	g.guidance = nil
	if d.Guidance == "" {
		return
	}
	g.guidance = &Guidance{Text: d.Guidance, By: d.By, HaltSeq: d.HaltSeq, Nodes: g.loopNodes(ev.CycleID, ev.Node)}
}

// activityInbound gives an activity its notice (NoticeFrom).
type activityInbound struct {
	sdkinterceptor.ActivityInboundInterceptorBase
}

func (a *activityInbound) ExecuteActivity(ctx context.Context, in *sdkinterceptor.ExecuteActivityInput) (any, error) {
	if n, ok := readNotice(sdkinterceptor.Header(ctx)); ok {
		ctx = context.WithValue(ctx, noticeKey{}, n)
	}
	return a.Next.ExecuteActivity(ctx, in)
}
