package interceptor

import (
	"context"
	"encoding/json"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"
)

// NoticeHeader is the header that carries a Notice to a guarded call, as
// sdk-go's tracing interceptor carries its span context: a JSON payload of
// the default data converter (payload codecs do not see headers, so do not
// put secrets in guidance).
const NoticeHeader = "loopguard-notice"

// MaxGuidanceBytes bounds a resume's guidance, in bytes of UTF-8: half of
// MaxNoticeBytes. Its JSON writes <, >, &, U+2028, U+2029 and control
// characters as 6-byte escapes, so the header cuts what does not fit
// (encodeNotice).
const MaxGuidanceBytes = 512

// MaxNoticeBytes bounds the notice header: the payload
// as history stores it, its JSON and its encoding metadata. The header
// goes with every call of the loop, into history and to the worker, and an
// agent puts it in its prompt.
const MaxNoticeBytes = 1024

// Notice is what the guard has to tell a guarded call: the warning in
// force, the human's guidance from the last resume, for the calls of the
// loop that halted, and how often the call was made before. A call with
// nothing to be told carries no header.
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
	// Repeats is how many guarded calls of this run before this one had
	// the same node and the same arguments (Options.CountRepeats), so that
	// a tool can answer "no new information" rather than run again. It
	// counts within one run: continue-as-new starts it over. Arguments are
	// compared by their encoding with the default data converter (a 64-bit
	// hash of it); arguments that do not encode, and new actions once a run
	// has seen 1024 distinct ones, count 0. The halt handler's calls are
	// not guarded and not counted.
	Repeats int `json:"repeats,omitempty"`
	// Budget is what is left of the budgets of the call's node and loop.
	// Only NoticeFor, in workflow code, fills it: the header does not
	// carry it (that would change the guard's commands).
	Budget *Budget `json:"budget,omitempty"`
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

// notice returns what the next call of node, with args, must be told.
func (g *guard) notice(node string, args []any) (Notice, bool) {
	n, ok := g.inForce(node)
	if g.cfg.CountRepeats {
		n.Repeats = g.repeats.count(node, args)
		ok = ok || n.Repeats > 0
	}
	return n, ok
}

// inForce returns the warning and the guidance in force for the calls of
// node. It only reads.
func (g *guard) inForce(node string) (Notice, bool) {
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
		delete(h, NoticeHeader)
		g.noticed = false
		return
	}
	h[NoticeHeader] = p
	g.noticed = true
}

// sameNotice reports whether a and b encode alike.
func sameNotice(a, b Notice) bool {
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
	return len(p.GetData())+payloadOverhead <= MaxNoticeBytes || proto.Size(p) <= MaxNoticeBytes
}

// encodeNotice encodes n for the header. A notice
// whose JSON is over MaxNoticeBytes is cut until it fits, least useful
// first: the warning's node list (the callee is one of them), who sent the
// guidance, the warning's message (its directive says what to do), the
// warning's node, and last the guidance. They can be long together: a
// detector's message can name a whole cycle of 200-byte node names, a
// cycle has up to MaxNodes members, By may be 1 KiB, and JSON's escapes
// (\u003c for <) can make 512 bytes of guidance six times as long.
func encodeNotice(n Notice) *commonpb.Payload {
	dc := converter.GetDefaultDataConverter()
	p, _ := dc.ToPayload(n) // a Notice always encodes
	if fits(p) {
		return p
	}
	w := Warning{}
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
		cut(proto.Size(p) - MaxNoticeBytes)
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
func (c *core) guide(ev HaltEvent, d Decision) {
	c.guidance = nil
	if d.Guidance == "" {
		return
	}
	c.guidance = &Guidance{Text: d.Guidance, By: d.By, HaltSeq: d.HaltSeq, Nodes: c.loopNodes(ev.CycleID, ev.Node)}
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
