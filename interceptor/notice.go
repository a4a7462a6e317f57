package interceptor

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/loopguard/loopguard/interceptor/protocol"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"
)

type noticeKey struct{}

// NoticeFrom returns the notice of the activity running with ctx. The
// worker that runs the activity must have the guard registered (New or
// NewPlugin, any Options): its activity interceptor reads the header.
func NoticeFrom(ctx context.Context) (protocol.Notice, bool) {
	n, ok := ctx.Value(noticeKey{}).(protocol.Notice)
	return n, ok
}

// WorkflowNotice returns the notice a child workflow was started with.
func WorkflowNotice(ctx workflow.Context) (protocol.Notice, bool) {
	if n, ok := ctx.Value(noticeKey{}).(protocol.Notice); ok {
		return n, true
	}
	return readNotice(sdkinterceptor.WorkflowHeader(ctx))
}

// readNotice decodes the notice header, if any. A header that does not
// decode is no notice.
func readNotice(h map[string]*commonpb.Payload) (protocol.Notice, bool) {
	p := h[protocol.NoticeHeader]
	if p == nil {
		return protocol.Notice{}, false
	}
	var n protocol.Notice
	if err := converter.GetDefaultDataConverter().FromPayload(p, &n); err != nil {
		return protocol.Notice{}, false
	}
	return n, true
}

// notice returns what the next call of node, with args, must be told.
func (g *guard) notice(node string, args []any) (protocol.Notice, bool) {
	n, ok := g.inForce(node)
	if g.cfg.CountRepeats {
		n.Repeats = g.repeats.count(node, args)
		ok = ok || n.Repeats > 0
	}
	return n, ok
}

// inForce returns the warning and the guidance in force for the calls of
// node. It only reads.
func (g *guard) inForce(node string) (protocol.Notice, bool) {
	var n protocol.Notice
	ok := false
	if w := g.pause.warning(); w != nil && slices.Contains(w.Nodes, node) {
		n.Warning, ok = w, true
	}
	if gd := g.guidance; gd != nil && slices.Contains(gd.Nodes, node) {
		n.Guidance, n.By, n.HaltSeq, ok = gd.Text, gd.By, gd.HaltSeq, true
	}
	return n, ok
}

// setNotice writes the notice of the call of node, of detector step step,
// about to be made into the workflow's outgoing header, or removes an
// earlier one.
func (g *guard) setNotice(ctx workflow.Context, node string, step int, args []any) {
	if !g.active {
		return
	}
	g.heed(ctx, node, step)
	g.refreshMemo(ctx)
	n, ok := g.notice(node, args)
	if !ok && !g.noticed {
		return // nothing to say and no notice to take back: the common call costs nothing more
	}
	h := sdkinterceptor.WorkflowHeader(ctx)
	if h == nil {
		return
	}
	var p *commonpb.Payload
	switch {
	case ok && g.sentPayload != nil && sameNotice(n, g.sent):
		p = g.sentPayload // payloads are never changed once made
	case ok:
		p = encodeNotice(n)
		g.sent, g.sentPayload = n, p
		if w := n.Warning; w != nil {
			// A copy: the guard's warning may change in place.
			c := *w
			c.Nodes = slices.Clone(w.Nodes)
			g.sent.Warning = &c
		}
	}
	if p == nil {
		delete(h, protocol.NoticeHeader)
		g.noticed = false
		return
	}
	h[protocol.NoticeHeader] = p
	g.noticed = true
}

// sameNotice reports whether a and b encode alike.
func sameNotice(a, b protocol.Notice) bool {
	if (a.Warning == nil) != (b.Warning == nil) {
		return false
	}
	if a.Warning != nil {
		x, y := a.Warning, b.Warning
		if x.Detector != y.Detector || x.Reason != y.Reason || x.Message != y.Message || x.Directive != y.Directive ||
			x.N != y.N || x.Of != y.Of || x.Node != y.Node || x.CycleID != y.CycleID || !slices.Equal(x.Nodes, y.Nodes) {
			return false
		}
	}
	return a.Guidance == b.Guidance && a.By == b.By && a.HaltSeq == b.HaltSeq && a.Repeats == b.Repeats
}

// payloadOverhead bounds what a payload of the default converter stores
// besides its data: the json/plain metadata and the fields' tags and
// lengths (about 30 bytes).
const payloadOverhead = 64

// fits reports whether p is at most MaxNoticeBytes as history stores it.
// Most notices are far below: they are not measured (proto.Size allocates).
func fits(p *commonpb.Payload) bool {
	return len(p.GetData())+payloadOverhead <= protocol.MaxNoticeBytes || proto.Size(p) <= protocol.MaxNoticeBytes
}

// encodeNotice encodes n for the header. A notice
// whose JSON is over MaxNoticeBytes is cut until it fits, least useful
// first: the warning's node list (the callee is one of them), who sent the
// guidance, the warning's message (its directive says what to do), the
// warning's node, and last the guidance. They can be long together: a
// detector's message can name a whole cycle of 200-byte node names, a
// cycle has up to MaxNodes members, By may be 1 KiB, and JSON's escapes
// (\u003c for <) can make 512 bytes of guidance six times as long.
func encodeNotice(n protocol.Notice) *commonpb.Payload {
	dc := converter.GetDefaultDataConverter()
	p, _ := dc.ToPayload(n) // a Notice always encodes
	if fits(p) {
		return p
	}
	w := protocol.Warning{}
	if n.Warning != nil {
		w = *n.Warning // cut a copy: the guard's warning stays whole
		n.Warning = &w
	}
	cuts := []func(excess int){
		func(int) { w.Nodes = nil },
		func(k int) { n.By = cutJSON(n.By, k) },
		func(k int) { w.Message = cutJSON(w.Message, k) },
		func(k int) { w.Node = cutJSON(w.Node, k) },
		func(k int) { n.Guidance = cutJSON(n.Guidance, k) },
	}
	for _, cut := range cuts {
		if fits(p) {
			break
		}
		cut(proto.Size(p) - protocol.MaxNoticeBytes)
		p, _ = dc.ToPayload(n)
	}
	return p
}

// cutJSON returns the longest prefix of s, cut at a rune boundary, whose
// JSON is at least k bytes shorter than that of s. JSON's escapes make a
// byte of s one to six bytes of JSON, so the cut is found by encoding.
func cutJSON(s string, k int) string {
	want := jsonLen(s) - k
	lo, hi := 0, len(s)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if jsonLen(cutUTF8(s, mid)) <= want {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cutUTF8(s, lo)
}

// jsonLen is the length of s encoded as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s) // a string always encodes
	return len(b)
}

// guide puts the guidance of a resume in force for the loop of trip.
func (c *core) guide(ev protocol.HaltEvent, d protocol.Decision) {
	c.guidance = nil
	if d.Guidance == "" {
		return
	}
	c.guidance = &protocol.Guidance{Text: d.Guidance, By: d.By, HaltSeq: d.HaltSeq, Nodes: c.loopNodes(ev.CycleID, ev.Node)}
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
