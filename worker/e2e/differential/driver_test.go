package differential_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/differential"
)

// By is who the driver says it is.
const By = "differential-driver"

// keyID names the operator key of the plans with keys.
const keyID = "differential-op"

// operatorKey is the driver's signing key, from a fixed seed.
var operatorKey = ed25519.NewKeyFromSeed([]byte("loopguard differential test key!"))

// driver plays the human of one plan: it answers each halt as the plan
// says, sends the workflow's own signals and updates and a human's halt,
// and notes the decisions loop.status shows, by phase (0, then 1 after a
// reset) and halt seq.
type driver struct {
	c  client.Client
	p  differential.Plan
	id string

	answers   int                          // halts answered so far
	attempts  map[int]int                  // per halt seq of this phase
	lastTry   map[int]time.Time            // per halt seq of this phase
	decisions [2]map[int]protocol.Decision // per phase, by halt seq
	refused   map[string]bool              // live refusals: "name: reason"
	phase     int
	resetRun  string // the reset run's id, once reset
	fallbacks int    // answers sent again after a refusal
}

func newDriver(c client.Client, p differential.Plan, id string) *driver {
	return &driver{c: c, p: p, id: id, attempts: map[int]int{}, lastTry: map[int]time.Time{},
		decisions: [2]map[int]protocol.Decision{{}, {}}, refused: map[string]bool{}}
}

// drive answers halts until the execution's latest run closes, and
// returns that run's id.
func (d *driver) drive(ctx context.Context) (string, error) {
	for {
		desc, err := d.c.DescribeWorkflowExecution(ctx, d.id, "")
		if err != nil {
			return "", fmt.Errorf("describe: %w", err)
		}
		info := desc.GetWorkflowExecutionInfo()
		if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			run := info.GetExecution().GetRunId()
			d.poll(ctx, run) // the last decision, read by replay
			return run, nil
		}
		if st, ok := d.poll(ctx, ""); ok && st.State == protocol.StateHalted && st.Halt != nil && !st.Handling {
			if err := d.answer(ctx, *st.Halt); err != nil {
				return "", err
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(40 * time.Millisecond):
		}
	}
}

// poll reads loop.status of run and notes its decision and refusals.
func (d *driver) poll(ctx context.Context, run string) (protocol.Status, bool) {
	var st protocol.Status
	v, err := d.c.QueryWorkflow(ctx, d.id, run, protocol.DefaultStatusQuery)
	if err != nil || v.Get(&st) != nil {
		return st, false
	}
	if dec := st.LastDecision; dec != nil {
		d.decisions[d.phase][dec.HaltSeq] = *dec
	}
	for _, r := range st.Refused {
		d.refused[fmt.Sprintf("%s at %s: %s", r.Name, r.WorkflowTime.UTC().Format(time.RFC3339Nano), r.Reason)] = true
	}
	return st, true
}

// answer answers halt h as the plan says; a second try, when the first
// was refused, goes by update (signed, from a window opened a minute
// back, when keys are set).
func (d *driver) answer(ctx context.Context, h protocol.HaltEvent) error {
	n := d.attempts[h.Seq]
	if n > 0 && time.Since(d.lastTry[h.Seq]) < 2*time.Second {
		return nil // give the answer sent time to land
	}
	if n >= 3 {
		return fmt.Errorf("halt %d still in force after %d answers", h.Seq, n)
	}
	a := d.p.Answers[min(d.answers, len(d.p.Answers)-1)]
	if n == 0 {
		d.answers++
		time.Sleep(a.Delay)
	} else {
		d.fallbacks++
		a.Update, a.Delay, a.Back = true, 0, true
	}
	d.attempts[h.Seq] = n + 1
	defer func() { d.lastTry[h.Seq] = time.Now() }()
	name, action := protocol.DefaultResumeSignal, protocol.ActionResume
	var payload any = protocol.ResumeRequest{Reason: "looked at it", By: By, Guidance: a.Guidance}
	if a.Escalate {
		name, action = protocol.DefaultEscalateSignal, protocol.ActionEscalate
		payload = protocol.EscalateRequest{Reason: "over to a human", By: By}
	}
	if d.p.Keys {
		ans := protocol.Answer{WorkflowID: d.id, RunID: h.RunID, HaltSeq: h.Seq, Action: action, By: By, KeyID: keyID}
		if a.Escalate {
			ans.Reason = "over to a human"
		} else {
			ans.Reason, ans.Guidance = "looked at it", a.Guidance
		}
		payload = sign(ans, a.Back)
	}
	if a.Update {
		uctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		hd, err := d.c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{WorkflowID: d.id, RunID: h.RunID, UpdateName: name,
			Args: []any{payload}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = hd.Get(uctx, nil)
		}
		if err != nil {
			d.refused[fmt.Sprintf("update %s of halt %d: %v", name, h.Seq, err)] = true
		}
		return nil
	}
	if err := d.c.SignalWorkflow(ctx, d.id, h.RunID, name, payload); err != nil && !closedErr(err) {
		return fmt.Errorf("signal %s: %w", name, err)
	}
	return nil
}

// sign signs a with the driver's key, valid from now (or a minute back)
// for half an hour.
func sign(a protocol.Answer, back bool) protocol.SignedAnswer {
	now := time.Now().UTC()
	a.NotBefore, a.NotAfter = now, now.Add(30*time.Minute)
	if back {
		a.NotBefore = now.Add(-time.Minute)
	}
	s, err := protocol.SignAnswer(a, operatorKey)
	if err != nil {
		panic(err) // the key is a fixed, valid one
	}
	return s
}

// input sends the workflow's own signals and updates and the human's
// halt, as the plan says, until ctx ends.
func (d *driver) input(ctx context.Context, wg *sync.WaitGroup) {
	every := func(n int, send func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d.p.SendAfter + time.Millisecond):
				}
				send()
			}
		}()
	}
	every(d.p.Signals, func() { _ = d.c.SignalWorkflow(ctx, d.id, "", differential.OwnSignalName, nil) })
	every(d.p.Updates, func() {
		uctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if hd, err := d.c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{WorkflowID: d.id, UpdateName: differential.OwnUpdateName,
			WaitForStage: client.WorkflowUpdateStageAccepted}); err == nil {
			_ = hd.Get(uctx, nil)
		}
	})
	if d.p.HaltAfter > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(d.p.HaltAfter):
			}
			var payload any = protocol.HaltRequest{Reason: "stop here", By: By}
			if d.p.Keys {
				st, ok := d.poll(ctx, "")
				if !ok {
					return
				}
				desc, err := d.c.DescribeWorkflowExecution(ctx, d.id, "")
				if err != nil {
					return
				}
				payload = sign(protocol.Answer{WorkflowID: d.id, RunID: desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(),
					HaltSeq: st.Halts, Action: protocol.ActionHalt, Reason: "stop here", By: By, KeyID: keyID}, true)
			}
			_ = d.c.SignalWorkflow(ctx, d.id, "", protocol.DefaultHaltSignal, payload)
		}()
	}
}

// reset resets run to one of its WorkflowTaskCompleted events, as the
// plan says, and returns the new run's id.
func (d *driver) reset(ctx context.Context, run string, events []int64) (string, error) {
	if len(events) == 0 {
		return "", errors.New("no WorkflowTaskCompleted event to reset to")
	}
	at := events[min(int(d.p.ResetAt*float64(len(events))), len(events)-1)]
	resp, err := d.c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace: "default", WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: d.id, RunId: run},
		Reason: "differential test", WorkflowTaskFinishEventId: at, RequestId: fmt.Sprintf("%s-reset", run),
	})
	if err != nil {
		return "", fmt.Errorf("reset to event %d: %w", at, err)
	}
	d.phase, d.resetRun = 1, resp.GetRunId()
	d.attempts, d.lastTry = map[int]int{}, map[int]time.Time{}
	return resp.GetRunId(), nil
}

// closedErr reports an answer that found the run closed (it ended while
// the driver answered).
func closedErr(err error) bool {
	return strings.Contains(err.Error(), "workflow execution already completed") || strings.Contains(err.Error(), "not found")
}
