package interceptor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/internal/strictjson"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// maxTextLen bounds the free-text fields of human input.
const maxTextLen = 1024

// decodeInput decodes a human's payload strictly into v: JSON only, no
// unknown fields, no trailing data, at most maxBytes. A missing payload or
// JSON null leaves v as it is. A bare JSON string is taken as the reason,
// which is what someone typing `--input '"looks fine"'` means.
func decodeInput(maxBytes int, p *commonpb.Payload, v *protocol.ResumeRequest) error {
	data, err := inputData(maxBytes, p)
	if err != nil || data == nil {
		return err
	}
	if data[0] == '"' {
		if err := json.Unmarshal(data, &v.Reason); err != nil {
			return fmt.Errorf("malformed JSON string: %v", err)
		}
		return validateResume(v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed JSON: %s", jsonProblem(err))
	}
	if dec.More() {
		return fmt.Errorf("malformed JSON: trailing data after the object")
	}
	return validateResume(v)
}

// inputData returns the JSON of a human's payload, trimmed, or nil for
// none (no payload, an empty one, JSON null): at most maxBytes, JSON only.
func inputData(maxBytes int, p *commonpb.Payload) ([]byte, error) {
	if p == nil {
		return nil, nil
	}
	data := p.GetData()
	if len(data) > maxBytes {
		return nil, fmt.Errorf("payload of %d bytes exceeds the limit of %d bytes", len(data), maxBytes)
	}
	switch enc := string(p.GetMetadata()[converter.MetadataEncoding]); enc {
	case converter.MetadataEncodingNil:
		return nil, nil
	case converter.MetadataEncodingJSON:
	default:
		return nil, fmt.Errorf("unsupported payload encoding %q: send JSON", enc)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	return data, nil
}

// jsonProblem says what is wrong with a payload in the payload's own terms,
// without the Go type names encoding/json puts in its errors.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the payload"
		} else {
			field = fmt.Sprintf("field %q", field)
		}
		return fmt.Sprintf("%s must not be a JSON %s", field, te.Value)
	}
	return err.Error()
}

// validateResume checks a human's payload: every one is decoded as a
// ResumeRequest, the widest of them; escalate and halt then refuse its
// "extend" (see parse).
func validateResume(r *protocol.ResumeRequest) error {
	for _, f := range []struct{ name, v string }{{"reason", r.Reason}, {"by", r.By}} {
		if len(f.v) > maxTextLen {
			return fmt.Errorf("%s is %d bytes long, more than %d", f.name, len(f.v), maxTextLen)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%s is not valid UTF-8", f.name)
		}
	}
	if e := r.Extend; e != nil {
		// One row per budget in detect's table: a new budget is checked here
		// without a change to this file.
		for _, b := range detect.Budgets() {
			if v := b.ExtensionValue(e); v < 0 || v != v {
				return fmt.Errorf("extend.%s must not be negative", b.JSON)
			}
		}
	}
	return nil
}

// firstPayload returns the single argument of a signal, rejecting more.
func firstPayload(ps *commonpb.Payloads) (*commonpb.Payload, error) {
	switch n := len(ps.GetPayloads()); n {
	case 0:
		return nil, nil
	case 1:
		return ps.GetPayloads()[0], nil
	default:
		return nil, fmt.Errorf("expected at most one argument, got %d", n)
	}
}

// request is a human's input as parsed: the request, and the key that
// signed it (operators' keys set).
type request struct {
	protocol.ResumeRequest
	signer string
}

// parse decodes the payload of the named human input, received at
// workflow time now. With operators' keys pinned, it must be a signed
// answer (signedRequest).
func (c *core) parse(name string, p *commonpb.Payload, now time.Time) (request, error) {
	var req request
	var err error
	if len(c.cfg.OperatorKeys) == 0 {
		err = decodeInput(c.cfg.MaxPayloadBytes, p, &req.ResumeRequest)
	} else {
		req, err = c.signedInput(name, p, now)
	}
	if err != nil {
		return req, &InputError{Name: name, Reason: err.Error()}
	}
	if req.Extend != nil && name != c.cfg.ResumeSignal && name != c.cfg.ResumeUpdate {
		return req, &InputError{Name: name, Reason: `"extend" is only accepted by resume`}
	}
	switch {
	case req.Guidance == "":
	case name != c.cfg.ResumeSignal && name != c.cfg.ResumeUpdate:
		return req, &InputError{Name: name, Reason: `"guidance" is only accepted by resume`}
	case len(req.Guidance) > protocol.MaxGuidanceBytes:
		return req, &InputError{Name: name, Reason: fmt.Sprintf(`"guidance" is %d bytes, at most %d`, len(req.Guidance), protocol.MaxGuidanceBytes)}
	case !utf8.ValidString(req.Guidance):
		return req, &InputError{Name: name, Reason: `"guidance" is not valid UTF-8`}
	}
	if req.Extend != nil {
		if err := checkExtension(req.Extend); err != nil {
			return req, &InputError{Name: name, Reason: err.Error()}
		}
	}
	return req, nil
}

// Ceilings on one resume's extension. Limits are
// summed without saturation, so an extension of 1e308 twice stored +Inf,
// which continue-as-new cannot encode, and a count near the largest int
// wrapped round to a negative limit, which switched the budget off. No
// human raises a budget by more than this in one resume.
const (
	maxExtendCount    = 1_000_000
	maxExtendDuration = 365 * 24 * time.Hour
	maxExtendCost     = 1e12
)

// checkExtension refuses an extension over its budget's ceiling.
func checkExtension(e *detect.Extension) error {
	for _, b := range detect.Budgets() {
		v := b.ExtensionValue(e)
		switch {
		case b.Kind == detect.BudgetCount && v > maxExtendCount:
			return fmt.Errorf("extend.%s is %g, at most %d in one resume", b.JSON, v, maxExtendCount)
		case b.Kind == detect.BudgetDuration && v > float64(maxExtendDuration):
			return fmt.Errorf("extend.%s is %s, at most %s in one resume", b.JSON, time.Duration(v), maxExtendDuration)
		case b.Kind == detect.BudgetCost && v > maxExtendCost:
			return fmt.Errorf("extend.%s is %g, at most %g in one resume", b.JSON, v, maxExtendCost)
		}
	}
	return nil
}

// decideSigned records a human decision for the halt in force, from a
// request a key may have signed: the decision names the key.
func (c *core) decideSigned(action protocol.Action, req request) protocol.Decision {
	var ext detect.Extension
	if req.Extend != nil {
		ext = *req.Extend
	}
	return c.pause.decide(protocol.Decision{Action: action, Reason: req.Reason, By: req.By, Guidance: req.Guidance, KeyID: req.signer}, ext)
}

// onSignal handles the guard's signals. It runs outside any coroutine and
// must not block. Bad input is recorded and logged, never fatal. It reports
// whether the guard took the signal; one it did not take may be the
// workflow's own signal of that name.
func (g *guard) onSignal(ctx workflow.Context, name string, args *commonpb.Payloads) bool {
	p, err := firstPayload(args)
	if err == nil {
		var plain *commonpb.Payload
		if plain, err = g.plainPayload(ctx, p); err == nil {
			p = plain
		}
	}
	if err == nil {
		err = g.takeInput(name, p, workflow.Now(ctx))
	}
	if err != nil {
		g.reject(ctx, name, err, p)
		return false
	}
	return true
}

// takeInput carries out the guard's signal name with its plain payload p
// at workflow time now: a decision for the halt in force, or a stop. The
// analysis of past histories (Judge) feeds it the signals it reads.
//
// A signed answer is held for the task that delivers it
// (holdsForTask), and taken there by deliver.
func (c *core) takeInput(name string, p *commonpb.Payload, now time.Time) error {
	if c.holdsForTask(name, p) {
		c.held = append(c.held, heldAnswer{name: name, p: p})
		return nil
	}
	return c.takeNow(name, p, now)
}

// takeNow is takeInput at workflow time now, with nothing held.
func (c *core) takeNow(name string, p *commonpb.Payload, now time.Time) error {
	req, err := c.parse(name, p, now)
	if err != nil {
		return err
	}
	switch name {
	case c.cfg.ResumeSignal:
		if err = c.pause.checkDecision(name); err == nil {
			c.decideSigned(protocol.ActionResume, req)
		}
	case c.cfg.EscalateSignal:
		if err = c.pause.checkDecision(name); err == nil {
			c.decideSigned(protocol.ActionEscalate, req)
		}
	case c.cfg.HaltSignal:
		err = c.stop(name, req.ResumeRequest, now)
	}
	return err
}

// stop asks for a user_stop halt at the next guarded call.
func (c *core) stop(name string, req protocol.ResumeRequest, now time.Time) error {
	if c.pause.showsHalted() {
		return &InputError{Name: name, Reason: fmt.Sprintf("already halted (halt %d)", c.pause.halt.Seq)}
	}
	msg := "a human asked to stop"
	if req.By != "" {
		msg = req.By + " asked to stop"
	}
	if req.Reason != "" {
		msg += ": " + req.Reason
	}
	// A detector's trip that is pending halts first. Under OnHalt pause or
	// fail it stops the workflow anyway, so the stop adds nothing; under
	// observe it is only recorded, so the stop waits behind
	// it and pauses the call after it is observed.
	queue := c.cfg.OnHalt == protocol.OnHaltObserve
	switch {
	case c.state.Stop(msg, now, queue):
		return nil
	case c.state.Stopping():
		return &InputError{Name: name, Reason: "a human's stop is already pending"}
	}
	return &InputError{Name: name, Reason: fmt.Sprintf("a halt is already pending (%s)", c.state.Pending().Reason)}
}

// reject records refused input in the status and the log.
func (g *guard) reject(ctx workflow.Context, name string, err error, p *commonpb.Payload) {
	reason := err.Error()
	if ie, ok := err.(*InputError); ok {
		reason = ie.Reason
	}
	r := protocol.Rejection{Name: name, Reason: reason, WorkflowTime: workflow.Now(ctx)}
	if data := p.GetData(); len(data) > 0 {
		r.Payload = shownPayload(p)
	}
	g.lastRejected = &r
	if len(g.cfg.OperatorKeys) > 0 {
		// Signed answers: every refusal is kept (the last maxRefused), so
		// that attempts to answer without a key show, not only the last.
		g.refused = append(g.refused, &r)
		if len(g.refused) > maxRefused {
			g.refused = g.refused[len(g.refused)-maxRefused:]
		}
	}
	g.countRejected(ctx, name, err)
	g.next.GetLogger(ctx).Warn("loopguard: input rejected", "name", name, "reason", reason)
}

// shownPayload is what the status shows of a rejected payload: its start
// when it is readable text, never a codec's ciphertext or binary data.
func shownPayload(p *commonpb.Payload) string {
	enc := string(p.GetMetadata()[converter.MetadataEncoding])
	if enc != converter.MetadataEncodingJSON || !utf8.Valid(p.GetData()) {
		return fmt.Sprintf("(%d bytes in encoding %q, not shown: not decoded to text)", len(p.GetData()), enc)
	}
	return strictjson.Truncate(string(p.GetData()), 200)
}

// registerUpdates installs the resume and escalate update handlers. Their
// validators reject without touching state: a rejected update leaves no
// trace in history, so recording it would break replay.
func (g *guard) registerUpdates(ctx workflow.Context) error {
	for _, u := range []struct {
		name   string
		action protocol.Action
	}{
		{g.cfg.ResumeUpdate, protocol.ActionResume},
		{g.cfg.EscalateUpdate, protocol.ActionEscalate},
	} {
		name, action := u.name, u.action
		validate := func(ctx workflow.Context, raw converter.RawValue) error {
			_, err := g.parse(name, raw.Payload(), workflow.Now(ctx))
			if err == nil {
				err = g.pause.checkDecision(name)
			}
			return rejection(g.countRejected(ctx, name, err))
		}
		handle := func(ctx workflow.Context, raw converter.RawValue) (protocol.Decision, error) {
			g.deliver(ctx) // signals before the update came first
			d, err := g.answerUpdate(name, action, raw.Payload(), workflow.Now(ctx))
			if err != nil {
				return protocol.Decision{}, rejection(g.countRejected(ctx, name, err))
			}
			return d, nil
		}
		// Registered below the guard's own outbound interceptor, which
		// watches for the workflow's handlers of the same names.
		if err := g.next.SetUpdateHandler(ctx, name, handle, workflow.UpdateHandlerOptions{Validator: validate}); err != nil {
			return fmt.Errorf("register update %s: %w", name, err)
		}
	}
	return nil
}

// answerUpdate takes the guard's update name, answering with action, with
// payload p at workflow time now: the decision for the halt in force, or
// why the update is refused. The update's handler and the Judge both
// take it here.
func (c *core) answerUpdate(name string, action protocol.Action, p *commonpb.Payload, now time.Time) (protocol.Decision, error) {
	req, err := c.parse(name, p, now)
	if err == nil {
		err = c.pause.checkDecision(name)
	}
	if err != nil {
		return protocol.Decision{}, err
	}
	return c.decideSigned(action, req), nil
}

// InputRejectedErrorType is the ApplicationError type an update caller
// receives when the guard refuses its input. Sending the same input again
// cannot succeed, so it is not retryable.
const InputRejectedErrorType = "LoopInputRejected"

// rejection turns an *InputError into the error an update caller sees.
func rejection(err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return temporal.NewNonRetryableApplicationError(ie.Error(), InputRejectedErrorType, nil)
	}
	return err
}
