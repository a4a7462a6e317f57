package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/workflows"
)

// The outcomes of a demo workflow. completed, escalated and gave_up are the
// workflows' own LoopResult.Outcome values.
const (
	outcomeCompleted = workflows.OutcomeCompleted
	outcomeEscalated = workflows.OutcomeEscalated
	outcomeGaveUp    = workflows.OutcomeGaveUp
	outcomeHalted    = "halted"  // paused by the guard, waiting for a human
	outcomeFailed    = "failed"  // the workflow failed, was terminated, timed out...
	outcomeRunning   = "running" // neither closed nor halted when the demo stopped waiting
)

// demoPollInterval is how often the demo asks each workflow how it is doing.
const demoPollInterval = 200 * time.Millisecond

// demo runs the sample scenarios against the worker.
type demo struct {
	client    client.Client
	namespace string
	address   string // frontend host:port
	embedded  bool
	uiURL     string // "" when unknown: no links
	taskQueue string
	out       io.Writer
	tty       bool // out is a terminal: the progress line is updated in place
	timeout   time.Duration
	// nodes are the guard's per-node options, for the names of metrics.
	nodes map[string]interceptor.NodeOptions
	// onHalt is the guard's OnHalt: with OnHaltFail nobody (no halt
	// handler, no human) can steer a halted loop, so the scenarios steered
	// after a halt end escalated.
	onHalt protocol.OnHalt
	// dataDir is the embedded server's data directory ("" in memory or on
	// an external server), and searchAttribute the guard's Keyword
	// attribute ("" when not registered): with both, the demo says how
	// many workflows of earlier runs are still paused there.
	dataDir, searchAttribute string
	// tctlShown is set once a halted row has shown the tctl commands.
	tctlShown bool
}

// demoResult is what became of one scenario's workflow.
type demoResult struct {
	Scenario   workflows.Scenario
	WorkflowID string
	RunID      string
	Outcome    string
	// Halt is the halt in force (halted), or the one a human escalated.
	Halt *protocol.HaltEvent
	// Status is the last loop.status answer, nil if none.
	Status *protocol.Status
	// Result is the workflow's result once it completed.
	Result *workflows.LoopResult
	// Err is the failure of a failed workflow.
	Err string
	// Guided is the demo's own resume, with guidance, of a SteerHuman
	// scenario's halt (the demo plays the operator there).
	Guided *protocol.Decision
	// escalates is set when the guard escalates the halt a steered
	// scenario would recover from (OnHaltFail).
	escalates bool
}

// demoOperator is the By of the demo's own resumes.
const demoOperator = "demo operator"

// matches reports whether the outcome is what the scenario wants: completed,
// or halted (paused, or escalated after the halt) for WantReason.
func (r *demoResult) matches() bool {
	switch {
	case r.escalates:
		return r.Outcome == outcomeEscalated && r.Halt != nil && r.Halt.HaltReason == r.Scenario.WantReason
	case r.Scenario.Want == workflows.WantCompleted:
		return r.Outcome == outcomeCompleted
	case r.Scenario.Want == workflows.WantHalted:
		return (r.Outcome == outcomeHalted || r.Outcome == outcomeEscalated) &&
			r.Halt != nil && r.Halt.HaltReason == r.Scenario.WantReason
	}
	return false
}

// outcomeText is the OUTCOME column.
func (r *demoResult) outcomeText() string {
	switch r.Outcome {
	case outcomeHalted, outcomeEscalated:
		if r.Halt != nil {
			return r.Outcome + ": " + string(r.Halt.HaltReason)
		}
	case outcomeCompleted:
		return r.steeredText()
	case outcomeGaveUp:
		return "gave up (no halt)"
	case outcomeFailed:
		return "failed: " + r.Err
	case outcomeRunning:
		return "still running"
	}
	return r.Outcome
}

// steeredText is the OUTCOME of a completed workflow: what steered it
// there, if anything did.
func (r *demoResult) steeredText() string {
	st := r.Status
	switch {
	case r.Guided != nil:
		return "completed: resumed with guidance"
	case st == nil || st.Halts == 0 && st.Warnings == 0:
		return outcomeCompleted
	case st.Halts == 0:
		return "completed: warned, heeded"
	case st.LastDecision != nil && st.LastDecision.By == interceptor.HandlerBy:
		return "completed: halt handler resumed"
	}
	return "completed: after a halt"
}

// iterationsText is the ITERATIONS column: the loop's own count once it
// has a result, else where the guard stopped it ("loop 3/8").
func (r *demoResult) iterationsText() string {
	if r.Result != nil {
		return strconv.Itoa(r.Result.Iterations)
	}
	if h := r.Halt; h != nil {
		switch {
		case h.MaxIterations > 0:
			return fmt.Sprintf("loop %d/%d", h.Iteration, h.MaxIterations)
		case h.Iteration > 0:
			return fmt.Sprintf("loop %d", h.Iteration)
		}
	}
	if r.Status != nil {
		steps := 0
		for _, n := range r.Status.Nodes {
			steps = max(steps, n.Steps)
		}
		if steps > 0 {
			return fmt.Sprintf("%d steps", steps)
		}
	}
	return "-"
}

func wantText(sc workflows.Scenario) string {
	switch {
	case sc.Want == workflows.WantHalted:
		return "halted: " + string(sc.WantReason)
	case sc.Steer != "":
		return sc.Want + ", steered by the " + sc.Steer
	}
	return sc.Want
}

func countMismatches(results []*demoResult) int {
	n := 0
	for _, r := range results {
		if !r.matches() {
			n++
		}
	}
	return n
}

// newSuffix returns a short random suffix for the demo's workflow ids, so
// that repeated demos do not collide.
func newSuffix() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 6)
	for i := range b {
		b[i] = digits[rand.IntN(len(digits))]
	}
	return string(b)
}

// run starts one workflow per scenario, waits until each has completed or
// halted (or the timeout), and prints the table. It returns an error only
// when the workflows cannot be started or ctx is done.
func (d *demo) run(ctx context.Context) ([]*demoResult, error) {
	d.announceKept(ctx)
	results, err := d.start(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(d.out, "\nDemo: started %d workflows, one per sample scenario; waiting up to %s for each to complete or halt.\n", len(results), d.timeout)
	if err := d.wait(ctx, results); err != nil {
		return results, err
	}
	d.printTable(results)
	return results, nil
}

// announceKept says how many workflows earlier runs left paused in the
// data directory: they stay paused there across runs, and count in the
// paused gauge and its oldest pause, which would otherwise surprise.
func (d *demo) announceKept(ctx context.Context) {
	if d.dataDir == "" || d.searchAttribute == "" {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := d.client.CountWorkflow(cctx, &workflowservice.CountWorkflowExecutionsRequest{
		Namespace: d.namespace, Query: interceptor.PausedQuery(d.searchAttribute)})
	if err != nil || resp.GetCount() == 0 {
		return
	}
	fmt.Fprintf(d.out, "\nData: %s keeps the workflows of earlier runs: %d of them are still paused on a halt, and count in\n"+
		"the paused gauge and its oldest pause. Answer them, or start afresh with --ephemeral or after deleting %s.\n",
		d.dataDir, resp.GetCount(), d.dataDir)
}

// start starts one workflow per scenario.
func (d *demo) start(ctx context.Context) ([]*demoResult, error) {
	suffix := newSuffix()
	var results []*demoResult
	for _, sc := range workflows.Scenarios() {
		id := "demo-" + sc.Name + "-" + suffix
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		run, err := d.client.ExecuteWorkflow(sctx, client.StartWorkflowOptions{
			ID:        id,
			TaskQueue: d.taskQueue,
		}, sc.Workflow, sc.Input)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("demo: start %s: %w", id, err)
		}
		steeredAfterHalt := sc.Steer == workflows.SteerReviewer || sc.Steer == workflows.SteerHuman
		results = append(results, &demoResult{Scenario: sc, WorkflowID: id, RunID: run.GetRunID(), Outcome: outcomeRunning,
			escalates: steeredAfterHalt && d.onHalt == protocol.OnHaltFail})
	}
	return results, nil
}

// wait polls the workflows until each has closed or halted, or the demo
// timeout passes, showing the progress. It fails only when ctx is done.
func (d *demo) wait(ctx context.Context, results []*demoResult) error {
	wctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	lastLine := ""
	show := func(final bool) {
		settled, halted := 0, 0
		for _, r := range results {
			if r.Outcome != outcomeRunning {
				settled++
			}
			if r.Outcome == outcomeHalted {
				halted++
			}
		}
		line := fmt.Sprintf("waiting: %d/%d settled (%d halted)", settled, len(results), halted)
		switch {
		case d.tty:
			fmt.Fprintf(d.out, "\r\033[K%s", line)
			if final {
				fmt.Fprintln(d.out)
			}
		case line != lastLine:
			fmt.Fprintln(d.out, line)
		}
		lastLine = line
	}
	ticker := time.NewTicker(demoPollInterval)
	defer ticker.Stop()
	for {
		pending := 0
		for _, r := range results {
			if r.Outcome == outcomeRunning && !d.check(wctx, r) {
				pending++
			}
		}
		show(pending == 0)
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if d.tty {
				fmt.Fprintln(d.out)
			}
			return ctx.Err()
		case <-wctx.Done():
			show(true)
			fmt.Fprintf(d.out, "demo: %d workflows neither completed nor halted within %s (--demo-timeout)\n", pending, d.timeout)
			return nil
		case <-ticker.C:
		}
	}
}

// check asks one workflow how it is doing and records it. It reports
// whether the workflow has settled: closed, or halted by the guard.
func (d *demo) check(ctx context.Context, r *demoResult) bool {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	desc, err := d.client.DescribeWorkflowExecution(cctx, r.WorkflowID, r.RunID)
	if err != nil {
		return false
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		d.collect(cctx, r)
		return true
	}
	st, err := d.status(cctx, r)
	if err != nil {
		return false
	}
	r.Status = st
	if st.State == protocol.StateHalted && st.Handling {
		return false // the workflow's halt handler is deciding: not settled yet
	}
	if st.State == protocol.StateHalted {
		if r.Scenario.Steer == workflows.SteerHuman && r.Guided == nil && st.Halt != nil {
			// The demo's operator answers; if the update did not go
			// through, the next poll tries again.
			d.guide(cctx, r, st.Halt.Seq)
			return false
		}
		r.Outcome, r.Halt = outcomeHalted, st.Halt
		return true
	}
	return false
}

// guide plays the operator of a SteerHuman scenario: it resumes the halt
// with the scenario's guidance, as guideCommand shows, and records the
// decision once the workflow took it.
func (d *demo) guide(ctx context.Context, r *demoResult, haltSeq int) {
	h, err := d.client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   r.WorkflowID,
		RunID:        r.RunID,
		UpdateName:   protocol.DefaultResumeUpdate,
		Args:         []any{guideRequest(r.Scenario)},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return
	}
	var dec protocol.Decision
	if err := h.Get(ctx, &dec); err == nil && dec.HaltSeq == haltSeq {
		r.Guided = &dec
	}
}

// guideRequest is the demo operator's resume of sc's halt.
func guideRequest(sc workflows.Scenario) protocol.ResumeRequest {
	return protocol.ResumeRequest{Reason: "try another approach", By: demoOperator, Guidance: sc.Guidance}
}

// guideCommand is the temporal CLI command a human would type for the
// demo's own resume.
func (d *demo) guideCommand(r *demoResult) string {
	b, _ := json.Marshal(guideRequest(r.Scenario)) // a ResumeRequest always encodes
	cmd := fmt.Sprintf("temporal workflow update execute --workflow-id %s --name %s --input '%s'",
		r.WorkflowID, protocol.DefaultResumeUpdate, strings.ReplaceAll(string(b), "'", `'\''`))
	if d.needsAddress() {
		cmd = addFlagAfter(cmd, []string{"temporal workflow update execute"}, "--address "+d.address)
	}
	return cmd
}

// status runs the guard's loop.status query.
func (d *demo) status(ctx context.Context, r *demoResult) (*protocol.Status, error) {
	v, err := d.client.QueryWorkflow(ctx, r.WorkflowID, r.RunID, protocol.DefaultStatusQuery)
	if err != nil {
		return nil, err
	}
	var st protocol.Status
	if err := v.Get(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

// collect records the result of a closed workflow.
func (d *demo) collect(ctx context.Context, r *demoResult) {
	var res workflows.LoopResult
	if err := d.client.GetWorkflow(ctx, r.WorkflowID, r.RunID).Get(ctx, &res); err != nil {
		r.Outcome, r.Err = outcomeFailed, failureText(err)
		return
	}
	r.Result, r.Outcome = &res, res.Outcome
	if res.Escalation != nil {
		h := res.Escalation.Halt
		r.Halt = &h
	}
	if st, err := d.status(ctx, r); err == nil {
		r.Status = st // what steered it, for the table
	}
}

// failureText is the short reason of a workflow's failure.
func failureText(err error) string {
	var app *temporal.ApplicationError
	var term *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	var canceled *temporal.CanceledError
	switch {
	case errors.As(err, &app):
		return app.Error()
	case errors.As(err, &term):
		return "terminated"
	case errors.As(err, &timeout):
		return "timed out"
	case errors.As(err, &canceled):
		return "canceled"
	}
	return oneLine(err.Error())
}

// commands are the operator commands for one halted workflow, with
// --address added when the temporal CLI's default would not reach the
// server.
func (d *demo) commands(workflowID string) interceptor.Commands {
	c := interceptor.OperatorCommands(d.namespace, workflowID)
	if d.needsAddress() {
		for _, p := range []*string{&c.Resume, &c.Escalate, &c.ResumeUpdate, &c.Status} {
			*p = addFlagAfter(*p, []string{"temporal workflow signal", "temporal workflow update execute", "temporal workflow query"}, "--address "+d.address)
		}
		for _, p := range []*string{&c.TctlResume, &c.TctlEscalate} {
			*p = addFlagAfter(*p, []string{"tctl"}, "--address "+d.address)
		}
	}
	return c
}

// needsAddress reports whether the CLI needs --address: its default is
// localhost:7233, and an external server's address is expected in
// TEMPORAL_ADDRESS, which the CLI reads too.
func (d *demo) needsAddress() bool {
	switch d.address {
	case "127.0.0.1:7233", "localhost:7233":
		return false
	}
	return d.embedded
}

// addFlagAfter inserts flag after the first of prefixes that cmd starts with.
func addFlagAfter(cmd string, prefixes []string, flag string) string {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(cmd, p+" "); ok {
			return p + " " + flag + " " + rest
		}
	}
	return cmd
}

// printTable prints one row per workflow and, under each halted one, why,
// the commands that resume or escalate it, and its page in the Web UI.
func (d *demo) printTable(results []*demoResult) {
	header := []string{"SCENARIO", "WORKFLOW ID", "OUTCOME", "ITERATIONS", "EXPECTED"}
	rows := [][]string{header}
	for _, r := range results {
		expected := "ok"
		if !r.matches() {
			expected = "MISMATCH: want " + wantText(r.Scenario)
		}
		rows = append(rows, []string{r.Scenario.Name, r.WorkflowID, r.outcomeText(), r.iterationsText(), expected})
	}
	widths := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	fmt.Fprintln(d.out)
	for i, row := range rows {
		var b strings.Builder
		for j, cell := range row {
			if j == len(row)-1 {
				b.WriteString(cell)
			} else {
				fmt.Fprintf(&b, "%-*s  ", widths[j], cell)
			}
		}
		fmt.Fprintln(d.out, strings.TrimRight(b.String(), " "))
		if i == 0 {
			continue
		}
		r := results[i-1]
		if r.Outcome == outcomeHalted && r.Halt != nil {
			d.printHalt(r)
		}
		if r.Outcome == outcomeCompleted {
			d.printSteered(r)
		}
	}

	fmt.Fprintln(d.out)
	if n := countMismatches(results); n > 0 {
		var names []string
		for _, r := range results {
			if !r.matches() {
				names = append(names, r.Scenario.Name)
			}
		}
		fmt.Fprintf(d.out, "MISMATCH: %d of %d scenarios did not end as expected: %s\n", n, len(results), strings.Join(names, ", "))
	} else {
		fmt.Fprintf(d.out, "All %d scenarios ended as expected.\n", len(results))
	}
	if d.uiURL != "" {
		fmt.Fprintf(d.out, "All workflows: %s\n", workflowsURL(d.uiURL, d.namespace))
	}
}

// printHalt prints the details of a halted workflow under its row.
func (d *demo) printHalt(r *demoResult) {
	h := r.Halt
	const indent = "    "
	why := h.Message
	if h.Node != "" {
		why = fmt.Sprintf("at %s (%s): %s", h.Node, h.Detector, h.Message)
	}
	fmt.Fprintf(d.out, "%swhy       %s\n", indent, why)
	if trend := demoTrend(*h, d.nodes[h.Node].MetricField); trend != "" {
		fmt.Fprintf(d.out, "%strend     %s\n", indent, trend)
	}
	for _, w := range h.Warnings {
		fmt.Fprintf(d.out, "%signored   warning %d/%d at %s (%s): %s\n", indent, w.N, w.Of, w.Node, w.Detector, w.Message)
	}
	c := d.commands(r.WorkflowID)
	fmt.Fprintf(d.out, "%sresume    %s\n", indent, c.Resume)
	fmt.Fprintf(d.out, "%sescalate  %s\n", indent, c.Escalate)
	if !d.tctlShown {
		// Once: tctl is past its end of support, and its commands differ
		// from the CLI's only in the workflow id.
		d.tctlShown = true
		fmt.Fprintf(d.out, "%stctl      %s\n", indent, c.TctlResume)
		fmt.Fprintf(d.out, "%s          %s (the same for the other rows)\n", indent, c.TctlEscalate)
	}
	if d.uiURL != "" {
		fmt.Fprintf(d.out, "%sUI        %s\n", indent, workflowURL(d.uiURL, d.namespace, r.WorkflowID))
	}
}

// printSteered prints, under a completed workflow's row, what steered it:
// the warning it heeded, the halt handler's guidance, or the demo's own
// resume with its command.
func (d *demo) printSteered(r *demoResult) {
	const indent = "    "
	st := r.Status
	if st == nil || st.Halts == 0 && st.Warnings == 0 {
		return
	}
	fmt.Fprintf(d.out, "%swarned    %d time(s); the loop's calls carried the warning in their notice\n", indent, st.Warnings)
	switch {
	case r.Guided != nil:
		fmt.Fprintf(d.out, "%sguidance  the demo resumed the halt as an operator would:\n%s          %s\n", indent, indent, d.guideCommand(r))
	case st.LastDecision != nil && st.LastDecision.By == interceptor.HandlerBy:
		fmt.Fprintf(d.out, "%sreviewer  the halt handler resumed the halt: %q\n", indent, st.LastDecision.Guidance)
	}
}

// follow reports, after the table, what becomes of the halted workflows
// when someone resumes or escalates them: one line per change, until every
// demo workflow has closed or ctx is done.
func (d *demo) follow(ctx context.Context, results []*demoResult) {
	type seen struct {
		state  protocol.State
		halts  int
		closed bool
	}
	last := map[string]seen{}
	for _, r := range results {
		s := seen{closed: r.Outcome != outcomeRunning && r.Outcome != outcomeHalted}
		if r.Status != nil {
			s.state, s.halts = r.Status.State, r.Status.Halts
		}
		last[r.WorkflowID] = s
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		open := 0
		for _, r := range results {
			prev := last[r.WorkflowID]
			if prev.closed {
				continue
			}
			open++
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			desc, err := d.client.DescribeWorkflowExecution(cctx, r.WorkflowID, r.RunID)
			if err != nil {
				cancel()
				continue
			}
			if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				d.collect(cctx, r)
				cancel()
				fmt.Fprintf(d.out, "%s  %s: %s (iterations %s)\n", time.Now().Format("15:04:05"), r.WorkflowID, r.outcomeText(), r.iterationsText())
				last[r.WorkflowID] = seen{closed: true}
				continue
			}
			st, err := d.status(cctx, r)
			cancel()
			if err != nil {
				continue
			}
			r.Status = st
			now := seen{state: st.State, halts: st.Halts}
			switch {
			case now.halts > prev.halts && st.State == protocol.StateHalted && st.Halt != nil:
				fmt.Fprintf(d.out, "%s  %s: halted again: %s at %s (halt %d)\n", time.Now().Format("15:04:05"), r.WorkflowID, st.Halt.HaltReason, st.Halt.Node, st.Halts)
			case now.state != prev.state && st.State == protocol.StateRunning && st.LastDecision != nil:
				by := ""
				if st.LastDecision.By != "" {
					by = " by " + st.LastDecision.By
				}
				fmt.Fprintf(d.out, "%s  %s: %s%s, running\n", time.Now().Format("15:04:05"), r.WorkflowID, st.LastDecision.Action+"d", by)
			}
			last[r.WorkflowID] = now
		}
		if open == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// demoTrend is the halt's evidence trend (interceptor.EvidenceTrend), but
// for a budget halt whose evidence is output hashes only: a row of hashes
// tells a reader nothing, how many of them differ does (a loop still
// changing when its budget ran out).
func demoTrend(h protocol.HaltEvent, metric string) string {
	e := h.Evidence
	if h.HaltReason != protocol.ReasonBudgetExceeded || len(e.OutputHashes) == 0 ||
		len(e.Metrics) > 0 || len(e.ProgressValues) > 0 || len(e.ErrorSignatures) > 0 {
		return interceptor.EvidenceTrend(h, metric)
	}
	distinct := map[string]bool{}
	for _, o := range e.OutputHashes {
		distinct[o] = true
	}
	return fmt.Sprintf("outputs %d different in the last %d calls of %s: still changing when the budget ran out", len(distinct), len(e.OutputHashes), h.Node)
}
