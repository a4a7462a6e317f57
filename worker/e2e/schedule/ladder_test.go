package schedule_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// The recovery ladder's part of the driver and of the checks: guidance on
// resume (feature guidance) and the workflow's halt handler (feature
// handler).

// HostileBy signs the guidance the guard must refuse: a decision or a
// notice by it is a failure.
const HostileBy = By + "/hostile"

// handlerWait is how long the driver leaves a halt to the handler that is
// to decide it before answering itself (a loaded machine may be slow).
const handlerWait = 3 * time.Second

// ladder is the driver's record of guidance sent and seen, and of what the
// halt handlers returned, per workflow id (the root's and each child's).
type ladder struct {
	n int // guidance texts made
	// sent are the guidance texts sent to a workflow that it may take.
	sent map[string]map[string]bool
	// inForce are the guidances loop.status showed in force, with the
	// calls of their nodes when first seen; called, those seen in force
	// again after more calls of their nodes.
	inForce map[string]map[guidanceKey]int
	called  map[string]map[guidanceKey]bool
	// handled are the handler's answers the progress query reported, by
	// halt seq.
	handled map[string]map[int]schedule.Handled
	// haltSeen is when the driver first saw a halt (key as answered).
	haltSeen map[string]time.Time
	// lastSent is when the driver last sent an answer to a workflow.
	lastSent map[string]time.Time
	// decided counts the handler's decisions loop.status showed;
	// accepted are the halts a decision update of the driver's was
	// accepted for (id/seq).
	decided, accepted map[string]bool
}

// guidanceKey is a guidance without its nodes.
type guidanceKey struct {
	text, by string
	haltSeq  int
}

func newLadder() ladder {
	return ladder{
		sent: map[string]map[string]bool{}, inForce: map[string]map[guidanceKey]int{}, called: map[string]map[guidanceKey]bool{},
		handled: map[string]map[int]schedule.Handled{}, haltSeen: map[string]time.Time{},
		lastSent: map[string]time.Time{}, decided: map[string]bool{}, accepted: map[string]bool{},
	}
}

// guidance makes a new guidance text for workflow id and notes it as sent.
func (d *driver) guidance(id string) string {
	d.lad.n++
	g := fmt.Sprintf("guidance %d of the driver for %s", d.lad.n, id)
	d.mayTake(id, g)
	return g
}

func (d *driver) mayTake(id, g string) {
	if d.lad.sent[id] == nil {
		d.lad.sent[id] = map[string]bool{}
	}
	d.lad.sent[id][g] = true
}

// maxGuidance is a new guidance text of exactly MaxGuidanceBytes: multi-byte
// runes, and characters the JSON of the notice header escapes.
func (d *driver) maxGuidance(id string) string {
	d.lad.n++
	b := []byte(fmt.Sprintf("guidance %d of the driver for %s, at the limit: ", d.lad.n, id))
	fill := []string{"<", "界", "&", "\x01", "é", "\u2028", ">", "\""}
	for i := 0; len(b)+len(fill[i%len(fill)]) <= protocol.MaxGuidanceBytes; i++ {
		b = append(b, fill[i%len(fill)]...)
	}
	for len(b) < protocol.MaxGuidanceBytes {
		b = append(b, 'x')
	}
	d.mayTake(id, string(b))
	return string(b)
}

// answerGuidance sends one of the guidance answers.
func (d *driver) answerGuidance(ctx context.Context, id string, a schedule.Answer) {
	req := func(g string) map[string]any {
		return map[string]any{"reason": "schedule test", "by": By, "guidance": g}
	}
	switch a {
	case schedule.AnswerGuidance:
		_ = d.c.SignalWorkflow(ctx, id, "", "resume", req(d.guidance(id)))
	case schedule.AnswerGuidanceMax:
		_ = d.c.SignalWorkflow(ctx, id, "", "resume", req(d.maxGuidance(id)))
	case schedule.AnswerGuidanceEmpty:
		_ = d.c.SignalWorkflow(ctx, id, "", "resume", req(""))
	case schedule.AnswerGuidanceUpdate:
		d.update(ctx, id, "resume", req(d.guidance(id)))
	case schedule.AnswerHostileGuidance, schedule.AnswerHostileGuidanceUpdate:
		byUpdate := a == schedule.AnswerHostileGuidanceUpdate
		for _, h := range d.hostile(id) {
			if !byUpdate {
				_ = d.c.SignalWorkflow(ctx, id, "", h.name, h.payload)
				continue
			}
			err := d.tryUpdate(ctx, id, h.name, h.payload)
			switch {
			case h.refusal == "":
			case err == nil:
				d.r.fail("guidance-refusal", "%s: the %s update with %s was accepted", id, h.name, h.what)
			case !strings.Contains(err.Error(), h.refusal):
				d.r.fail("guidance-refusal", "%s: the %s update with %s was refused with %q, want %q", id, h.name, h.what, short(err), h.refusal)
			}
		}
		if byUpdate {
			d.update(ctx, id, "resume", req(d.guidance(id)))
		} else {
			_ = d.c.SignalWorkflow(ctx, id, "", "resume", req(d.guidance(id)))
		}
	}
}

// hostileInput is one piece of guidance the guard must refuse (refusal is
// the reason it must give), or may take only as valid UTF-8.
type hostileInput struct {
	what, name string
	payload    any
	refusal    string
}

func (d *driver) hostile(id string) []hostileInput {
	over := fmt.Sprintf("guidance of %s one byte over the limit ", id)
	over += strings.Repeat("x", protocol.MaxGuidanceBytes+1-len(over))
	// JSON text holding a byte that is not UTF-8: the guard refuses it, or
	// decodes it as U+FFFD as encoding/json does; either way no notice
	// carries the byte.
	d.lad.n++
	bad := fmt.Sprintf("guidance %d of the driver for %s with an invalid byte: ", d.lad.n, id)
	d.mayTake(id, bad+"\uFFFD")
	raw := converter.NewRawValue(&commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)},
		Data:     []byte(`{"reason":"schedule test","by":"` + By + `","guidance":"` + bad + "\xff" + `"}`),
	})
	return []hostileInput{
		{what: "guidance of 513 bytes", name: "resume", payload: map[string]any{"by": HostileBy, "guidance": over},
			refusal: fmt.Sprintf(`"guidance" is %d bytes, at most %d`, protocol.MaxGuidanceBytes+1, protocol.MaxGuidanceBytes)},
		{what: "guidance", name: "escalate", payload: map[string]any{"by": HostileBy, "guidance": "escalate with guidance"},
			refusal: `"guidance" is only accepted by resume`},
		{what: "an invalid byte in its guidance", name: "resume", payload: raw},
	}
}

// tryUpdate sends an update and returns its error; it notes the halts a
// human's decision update was accepted for.
func (d *driver) tryUpdate(ctx context.Context, id, name string, arg any) error {
	uctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hd, err := d.c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	var dec protocol.Decision
	if err := hd.Get(uctx, &dec); err != nil {
		return err
	}
	if dec.HaltSeq > 0 {
		d.lad.accepted[fmt.Sprintf("%s/%d", id, dec.HaltSeq)] = true
	}
	return nil
}

// leaveToHandler reports whether the driver leaves halt key of workflow
// id to the workflow's halt handler for now: the plan's handler decides
// it, and has not yet returned (handlerWait at most). A handler that
// sleeps is answered at once: the human's decision wins. A halt still in
// force after its handler returned a decision lost that decision.
func (d *driver) leaveToHandler(id, key string, seq int) bool {
	k := schedule.HandlerFor(d.p.Handlers, seq)
	if k.Action() == "" || k == schedule.HandlerSleep {
		return false
	}
	if hd, ok := d.lad.handled[id][seq]; ok {
		if a := hd.Action; a == protocol.ActionResume || a == protocol.ActionEscalate {
			// The progress was read before this status: the handler's
			// decision should have ended the halt in the same task.
			d.r.fail("handler-decision-lost", "%s: the halt handler returned %q for halt %d, and the workflow is still halted on it", id, a, seq)
		}
		return false
	}
	at, ok := d.lad.haltSeen[key]
	if !ok {
		d.lad.haltSeen[key] = time.Now()
		return true
	}
	wait := handlerWait
	if k == schedule.HandlerSlow || k == schedule.HandlerSlowEscalate {
		// Its sleep is the point: a human who answers first takes the
		// pause over, and the handler's time is no longer tested.
		wait += schedule.HandlerSlowSleep
	}
	return time.Since(at) < wait
}

// progressHandled notes the handler's answers a progress query reported.
func (d *driver) progressHandled(id string, hs []schedule.Handled) {
	for _, h := range hs {
		if d.lad.handled[id] == nil {
			d.lad.handled[id] = map[int]schedule.Handled{}
		}
		d.lad.handled[id][h.Seq] = h
	}
}

// childHandled asks a child's progress query for its handler's answers.
func (d *driver) childHandled(ctx context.Context, id string) {
	if len(d.p.Handlers) == 0 {
		return
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := d.c.QueryWorkflow(qctx, id, "", schedule.ProgressQuery)
	var prog schedule.Progress
	if err == nil && v.Get(&prog) == nil {
		d.progressHandled(id, prog.Handled)
	}
}

// observe checks what a loop.status of workflow id shows of the ladder:
// the guidance in force, the last decision, and no node for the handler's
// own calls.
func (d *driver) observe(id string, st protocol.Status) {
	if g := st.Guidance; g != nil {
		calls := 0
		for _, n := range st.Nodes {
			if slices.Contains(g.Nodes, n.Node) {
				calls += n.Calls
			}
		}
		if d.lad.inForce[id] == nil {
			d.lad.inForce[id], d.lad.called[id] = map[guidanceKey]int{}, map[guidanceKey]bool{}
		}
		key := guidanceKey{text: g.Text, by: g.By, haltSeq: g.HaltSeq}
		if first, seen := d.lad.inForce[id][key]; !seen {
			d.checkGuidance(id, "loop.status", g.Text, g.By, g.HaltSeq)
			d.lad.inForce[id][key] = calls
		} else if calls > first {
			d.lad.called[id][key] = true
		}
	}
	for _, n := range st.Nodes {
		if n.Node == schedule.ReviewNode {
			d.r.fail("handler-guarded", "%s: the halt handler's %s calls are a node of the guard", id, schedule.ReviewNode)
		}
	}
	if dec := st.LastDecision; dec != nil {
		d.checkHandlerDecision(id, *dec)
	}
}

// checkHandlerDecision: a decision by the halt handler is the one the plan's
// handler returns for that halt, and never one of a halt a human's update
// decided first; a handler that hands a halt over never decides it; a
// handler that decided before any human answered is the one the decision
// names.
func (d *driver) checkHandlerDecision(id string, dec protocol.Decision) {
	k := schedule.HandlerFor(d.p.Handlers, dec.HaltSeq)
	if dec.By == interceptor.HandlerBy {
		key := fmt.Sprintf("%s/%d", id, dec.HaltSeq)
		if d.lad.decided[key] {
			return // checked when first seen
		}
		d.lad.decided[key] = true
		d.r.handlerDecisions++
		switch {
		case d.lad.accepted[key]:
			d.r.fail("human-overridden", "%s: the driver's decision update for halt %d was accepted, and the decision is the halt handler's: %+v", id, dec.HaltSeq, dec)
		case k.Action() == "":
			d.r.fail("handler-decision", "%s: halt %d decided by the halt handler (%+v), whose kind %q hands it to a human", id, dec.HaltSeq, dec, k)
		case dec.Action != k.Action():
			d.r.fail("handler-decision", "%s: halt %d: the halt handler of kind %q decided %q, want %q", id, dec.HaltSeq, k, dec.Action, k.Action())
		case dec.Action == protocol.ActionResume:
			d.checkGuidance(id, "lastDecision", dec.Guidance, dec.By, dec.HaltSeq)
		}
		return
	}
	hd, ok := d.lad.handled[id][dec.HaltSeq]
	returned := hd.Action
	if !ok || returned == "" || k.Action() == "" || k == schedule.HandlerSleep || dec.Action == protocol.ActionCancel {
		return
	}
	if timeout := d.p.Options().PauseTimeout; dec.By == "loopguard" && timeout > 0 && hd.Took >= timeout {
		return // the pause timeout decided before the handler returned
	}
	if at, sent := d.lad.lastSent[id]; sent && time.Since(at) < 10*time.Second {
		return // the driver's answer may have come first
	}
	d.r.fail("handler-decision-lost", "%s: the halt handler returned %q for halt %d before any answer, and the decision is %+v", id, returned, dec.HaltSeq, dec)
}

// checkGuidance: guidance a status or notice shows is valid, within the
// limit, and was sent by the driver to this workflow or returned by the
// plan's halt handler for that halt.
func (d *driver) checkGuidance(id, where, text, by string, seq int) {
	if text == "" {
		return
	}
	if len(text) > protocol.MaxGuidanceBytes || !utf8.ValidString(text) {
		d.r.fail("guidance-invalid", "%s: %s shows guidance of %d bytes (valid UTF-8 %v) by %q", id, where, len(text), utf8.ValidString(text), by)
	}
	switch by {
	case By:
		if !d.lad.sent[id][text] {
			d.r.fail("guidance-unsent", "%s: %s shows guidance %q that the driver never sent it", id, where, firstLine(text))
		}
	case interceptor.HandlerBy:
		k := schedule.HandlerFor(d.p.Handlers, seq)
		want := strings.ToValidUTF8(schedule.HandlerGuidance(k, seq), "")
		if !strings.HasPrefix(want, text) || (len(want) <= protocol.MaxGuidanceBytes && text != want) {
			d.r.fail("guidance-unsent", "%s: %s shows guidance %q by the halt handler for halt %d, whose kind %q gives %q", id, where, firstLine(text), seq, k, firstLine(want))
		}
	default:
		d.r.fail("guidance-unsent", "%s: %s shows guidance %q by %q", id, where, firstLine(text), by)
	}
}

// cutOf reports whether notice n carries guidance g, whole or, when the
// header had to be cut to protocol.MaxNoticeBytes,
// cut: its by, then its text, are prefixes of g's.
func cutOf(g guidanceKey, n protocol.Notice) bool {
	return n.Guidance != "" && strings.HasPrefix(g.text, n.Guidance) && strings.HasPrefix(g.by, n.By)
}

// uncut returns the guidance text and sender a notice's guidance was cut
// from: the guidance in force that loop.status showed, or one the driver
// sent, or the notice's own when none matches.
func (d *driver) uncut(id string, n protocol.Notice) (text, by string) {
	for g := range d.lad.inForce[id] {
		if g.haltSeq == n.HaltSeq && cutOf(g, n) {
			return g.text, g.by
		}
	}
	// A guidance in force too briefly for loop.status to show it: one
	// the driver sent.
	for text := range d.lad.sent[id] {
		if cutOf(guidanceKey{text: text, by: By}, n) {
			return text, By
		}
	}
	return n.Guidance, n.By
}

// noticed is one notice a call carried.
type noticed struct {
	where  string
	event  int // index of the call's event in the history
	notice protocol.Notice
	bytes  int
}

// checkNotices: every notice a call carried (the activity calls' and child
// starts' headers in the histories, what the activities and local
// activities read with NoticeFrom) is within 1 KiB and carries guidance
// that checkGuidance accepts; the halt handler's own calls carry none; and
// a guidance loop.status showed in force twice, its nodes called in
// between, reached a call.
func (d *driver) checkNotices(hs []hist) {
	ids := append([]string{d.id}, d.p.ChildTags()...)
	for i := 1; i < len(ids); i++ {
		ids[i] = d.id + "-" + ids[i]
	}
	byID := map[string][]noticed{}
	for _, x := range hs {
		id := d.id
		if tag, ok := strings.CutPrefix(x.name, "child "); ok {
			id = d.id + "-" + tag
		}
		byID[id] = append(byID[id], headerNotices(x)...)
	}
	for _, id := range ids {
		for _, s := range schedule.NoticesOf(id) {
			if schedule.IsHandlerCall(s.Tag) {
				if s.Notice != nil {
					d.r.fail("handler-call-noticed", "%s: the halt handler's call %s (%s) carried a notice: %+v", id, s.Tag, s.Node, *s.Notice)
				}
				continue
			}
			if s.Notice != nil {
				byID[id] = append(byID[id], noticed{where: fmt.Sprintf("call %s (%s)", s.Tag, s.Node), notice: *s.Notice, bytes: s.Bytes})
			}
		}
		for _, n := range byID[id] {
			if n.bytes > protocol.MaxNoticeBytes {
				d.r.fail("notice-size", "%s: %s carried a notice header of %d bytes (guidance %d bytes)", id, n.where, n.bytes, len(n.notice.Guidance))
			}
			text, by := d.uncut(id, n.notice)
			d.checkGuidance(id, n.where, text, by, n.notice.HaltSeq)
		}
		for g := range d.lad.called[id] {
			d.r.guided++
			if !slices.ContainsFunc(byID[id], func(n noticed) bool {
				return n.notice.HaltSeq == g.haltSeq && cutOf(g, n.notice)
			}) {
				d.r.guided--
				d.r.fail("guidance-not-delivered", "%s: loop.status showed guidance %q by %q for halt %d in force while its nodes were called, and no call carried it", id, firstLine(g.text), g.by, g.haltSeq)
			}
		}
	}
}

// headerNotices reads the notice headers of a history's activity
// schedules and child workflow starts (headers are not encoded by a codec).
func headerNotices(x hist) []noticed {
	var out []noticed
	for i, e := range x.h.GetEvents() {
		var h *commonpb.Header
		var what string
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := e.GetActivityTaskScheduledEventAttributes()
			h, what = a.GetHeader(), "activity "+a.GetActivityType().GetName()
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
			h, what = a.GetHeader(), "child "+a.GetWorkflowId()
		default:
			continue
		}
		p := h.GetFields()[protocol.NoticeHeader]
		if p == nil {
			continue
		}
		var n protocol.Notice
		if err := converter.GetDefaultDataConverter().FromPayload(p, &n); err != nil {
			n.Guidance = "(undecodable notice: " + err.Error() + ")"
		}
		out = append(out, noticed{where: fmt.Sprintf("%s: %s (event %d)", x.name, what, e.GetEventId()), event: i, notice: n, bytes: proto.Size(p)})
	}
	return out
}
