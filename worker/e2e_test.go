package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap/zapcore"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/workflows"
)

// e2e is the embedded server, client and guarded worker, set up by the
// functions run uses.
type e2e struct {
	t   *testing.T
	cfg config
	srv *devserver.Server
	c   client.Client
}

func startE2E(t *testing.T, ctx context.Context) *e2e {
	t.Helper()
	cfg, err := parseFlags([]string{"--ephemeral", "--port", "0", "--ui-port", "0"}, noEnv)
	require.NoError(t, err)
	logger := testLogger(t, zapcore.WarnLevel)

	began := time.Now()
	srv, err := startEmbedded(ctx, cfg, logger)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	t.Logf("embedded server ready in %v: frontend %s, UI %s", time.Since(began).Round(time.Millisecond), srv.FrontendHostPort(), srv.UIURL())

	c, err := srv.NewClient(client.Options{Logger: newSDKLogger(logger)})
	require.NoError(t, err)
	t.Cleanup(c.Close)

	opts, err := guardOptions(cfg)
	require.NoError(t, err)
	opts.SupervisorWorkflowID = cfg.supervisorID
	opts.SearchAttribute = embeddedSearchAttribute(cfg)
	require.Equal(t, defaultSearchAttribute, opts.SearchAttribute)
	w, err := startWorker(c, cfg.taskQueue, opts, logger)
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	_, err = ensureSupervisor(ctx, c, cfg.supervisorID, cfg.taskQueue)
	require.NoError(t, err)
	return &e2e{t: t, cfg: cfg, srv: srv, c: c}
}

// status queries loop.status.
func (e *e2e) status(ctx context.Context, id string) protocol.Status {
	e.t.Helper()
	v, err := e.c.QueryWorkflow(ctx, id, "", protocol.DefaultStatusQuery)
	require.NoError(e.t, err)
	var s protocol.Status
	require.NoError(e.t, v.Get(&s))
	return s
}

// waitHalted waits until the workflow is halted for the n-th time.
func (e *e2e) waitHalted(ctx context.Context, id string, n int) protocol.Status {
	e.t.Helper()
	for {
		s := e.status(ctx, id)
		if s.State == protocol.StateHalted && s.Halts >= n {
			return s
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("%s: not halted %d times: last status %+v", id, n, s)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// result waits for the workflow's LoopResult.
func (e *e2e) result(ctx context.Context, id string) workflows.LoopResult {
	e.t.Helper()
	var res workflows.LoopResult
	require.NoError(e.t, e.c.GetWorkflow(ctx, id, "").Get(ctx, &res), id)
	return res
}

// signalsNamed counts the WorkflowExecutionSignaled events named name.
func (e *e2e) signalsNamed(ctx context.Context, id, name string) int {
	e.t.Helper()
	n := 0
	it := e.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(e.t, err)
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == name {
			n++
		}
	}
	return n
}

func httpGet(t *testing.T, ctx context.Context, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// testEndToEnd runs every scenario through a real guarded worker on the
// embedded server, checks each outcome against the scenario's Want, then
// answers halts the way an operator would: a resume signal, a resume
// update and an escalate signal.
func testEndToEnd(t *testing.T) {
	ctx := testContext(t, 80*time.Second)
	e := startE2E(t, ctx)

	out := &syncBuffer{}
	d := &demo{
		client:    e.c,
		namespace: e.srv.Namespace(),
		address:   e.srv.FrontendHostPort(),
		embedded:  true,
		uiURL:     e.srv.UIURL(),
		taskQueue: e.cfg.taskQueue,
		out:       out,
		timeout:   60 * time.Second,
	}
	began := time.Now()
	results, err := d.run(ctx)
	require.NoError(t, err)
	t.Logf("demo settled in %v:\n%s", time.Since(began).Round(time.Millisecond), out.String())

	byName := map[string]*demoResult{}
	var halted []string
	for _, r := range results {
		byName[r.Scenario.Name] = r
		assert.Truef(t, r.matches(), "%s: got %s, want %s", r.Scenario.Name, r.outcomeText(), wantText(r.Scenario))
		switch r.Scenario.Want {
		case workflows.WantCompleted:
			if assert.NotNil(t, r.Result, r.Scenario.Name) {
				assert.Equal(t, workflows.OutcomeCompleted, r.Result.Outcome, r.Scenario.Name)
			}
		case workflows.WantHalted:
			halted = append(halted, r.WorkflowID)
			if assert.NotNil(t, r.Halt, r.Scenario.Name) {
				assert.Equal(t, r.WorkflowID, r.Halt.WorkflowID)
				assert.Equal(t, 1, r.Halt.Seq)
			}
		}
	}
	require.Len(t, byName, len(workflows.Scenarios()))
	require.False(t, t.Failed(), "every scenario must end as expected before the halts are answered")

	// Every halted workflow has loop.halted in its own history.
	for _, id := range halted {
		assert.Equal(t, 1, e.signalsNamed(ctx, id, protocol.DefaultHaltedSignal), "%s: one loop.halted signal in its history", id)
	}

	// The supervisor heard of every halt.
	assert.Eventually(t, func() bool {
		v, err := e.c.QueryWorkflow(ctx, e.cfg.supervisorID, "", workflows.HaltedQuery)
		if err != nil {
			return false
		}
		var halts []protocol.HaltEvent
		if v.Get(&halts) != nil {
			return false
		}
		var ids []string
		for _, h := range halts {
			ids = append(ids, h.WorkflowID)
		}
		for _, id := range halted {
			if !slices.Contains(ids, id) {
				return false
			}
		}
		return true
	}, 10*time.Second, 100*time.Millisecond, "the supervisor's %q query lists %v", workflows.HaltedQuery, halted)

	// The guard's search attribute lists the halted workflows.
	assert.Eventually(t, func() bool {
		resp, err := e.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: defaultSearchAttribute + ` STARTS_WITH "halted"`,
		})
		return err == nil && len(resp.GetExecutions()) == len(halted)
	}, 10*time.Second, 100*time.Millisecond, "%s STARTS_WITH \"halted\" lists the halted workflows", defaultSearchAttribute)

	// Resumed by signal: identical-patch goes on proposing the same patch,
	// so the guard halts it again, for the same reason.
	idPatch := byName[activities.ScenarioIdenticalPatch].WorkflowID
	require.NoError(t, e.c.SignalWorkflow(ctx, idPatch, "", protocol.DefaultResumeSignal,
		protocol.ResumeRequest{Reason: "one more try", By: "e2e"}))

	// Resumed by update: repeated-error's sandbox stays broken.
	repErr := byName[activities.ScenarioRepeatedError].WorkflowID
	h, err := e.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   repErr,
		UpdateName:   protocol.DefaultResumeUpdate,
		Args:         []any{protocol.ResumeRequest{Reason: "sandbox fixed", By: "e2e"}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	var dec protocol.Decision
	require.NoError(t, h.Get(ctx, &dec))
	assert.Equal(t, protocol.Decision{Action: "resume", Reason: "sandbox fixed", By: "e2e", HaltSeq: 1}, dec)

	// Escalated by signal: oscillating ends with Outcome "escalated".
	osc := byName[activities.ScenarioOscillating].WorkflowID
	require.NoError(t, e.c.SignalWorkflow(ctx, osc, "", protocol.DefaultEscalateSignal,
		protocol.EscalateRequest{Reason: "pick one parser", By: "e2e"}))
	res := e.result(ctx, osc)
	assert.Equal(t, workflows.OutcomeEscalated, res.Outcome)
	if assert.NotNil(t, res.Escalation) {
		assert.Equal(t, "pick one parser", res.Escalation.Reason)
		assert.Equal(t, "e2e", res.Escalation.By)
		assert.Equal(t, protocol.ReasonOscillating, res.Escalation.Halt.HaltReason)
		assert.Equal(t, osc, res.Escalation.Halt.WorkflowID)
	}
	t.Logf("oscillating escalated: %+v", res)

	// The resumed loops go on, make no more progress than before, and are
	// halted again. A resume starts the warning ladder over, so each is
	// warned once more, and the cycle's iteration budget (8, which does
	// not warn) comes before the detector's second trip; without the
	// warning identical-patch would halt for the same reason, and
	// repeated-error for the same errors or as stalled.
	budget := []protocol.HaltReason{protocol.ReasonBudgetExceeded, protocol.ReasonStalled, protocol.ReasonRepeatedError}
	for _, tc := range []struct {
		id      string
		reasons []protocol.HaltReason
	}{
		{idPatch, budget},
		{repErr, budget},
	} {
		s := e.waitHalted(ctx, tc.id, 2)
		assert.Equal(t, 2, s.Halt.Seq, tc.id)
		assert.Contains(t, tc.reasons, s.Halt.HaltReason, "%s: %s", tc.id, s.Halt.Message)
		if assert.NotNil(t, s.LastDecision, tc.id) {
			assert.Equal(t, protocol.ActionResume, s.LastDecision.Action, tc.id)
			assert.Equal(t, "e2e", s.LastDecision.By, tc.id)
		}
		t.Logf("%s halted again: %s (%s): %s", tc.id, s.Halt.HaltReason, s.Halt.Detector, s.Halt.Message)
		assert.Equal(t, 2, e.signalsNamed(ctx, tc.id, protocol.DefaultHaltedSignal), "%s: each halt is in its history", tc.id)

		// Escalating the second halt ends the loop, with the turns run
		// since the resume.
		require.NoError(t, e.c.SignalWorkflow(ctx, tc.id, "", protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "e2e"}))
		res := e.result(ctx, tc.id)
		assert.Equal(t, workflows.OutcomeEscalated, res.Outcome, tc.id)
		if assert.NotNil(t, res.Escalation, tc.id) {
			assert.Equal(t, 2, res.Escalation.Halt.Seq, tc.id)
		}
		first := byName[activities.ScenarioIdenticalPatch]
		if tc.id == repErr {
			first = byName[activities.ScenarioRepeatedError]
		}
		assert.Greater(t, res.Iterations, first.Halt.Iteration, "%s: the loop went on after the resume", tc.id)
	}
	assert.Equal(t, 1, e.signalsNamed(ctx, osc, protocol.DefaultHaltedSignal))

	// The UI serves its app, the workflow pages, and lists the demo
	// workflows through its API.
	code, body := httpGet(t, ctx, e.srv.UIURL()+"/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, strings.ToLower(body), "<html")
	code, _ = httpGet(t, ctx, workflowURL(e.srv.UIURL(), e.srv.Namespace(), idPatch))
	assert.Equal(t, http.StatusOK, code, "the workflow link the demo prints")
	code, body = httpGet(t, ctx, e.srv.UIURL()+"/api/v1/namespaces/"+e.srv.Namespace()+"/workflows")
	assert.Equal(t, http.StatusOK, code, body)
	for _, r := range results {
		assert.Contains(t, body, `"`+r.WorkflowID+`"`)
	}
}
