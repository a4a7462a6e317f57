package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// PausedStatus is what `worker answer status` prints for a run that
// Temporal's Workflow Pause holds, which takes no query: the pause, and
// the halt it answered with the evidence, as the judgement of the run's
// history under the watcher's policy finds it (the same halt the
// watcher's /status and `worker analyze` show).
type PausedStatus struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	State      string `json:"state"` // "paused"
	// PausedBy, PauseReason and PausedAt are the pause's.
	PausedBy    string    `json:"pausedBy,omitempty"`
	PauseReason string    `json:"pauseReason,omitempty"`
	PausedAt    time.Time `json:"pausedAt,omitzero"`
	// Watched says that worker watch paused the run (its identity), and
	// Guarded that the interceptor guards it (a human's pause, then: its
	// halts are answered after the unpause, with the guard's answers).
	Watched bool `json:"watched"`
	Guarded bool `json:"guarded"`
	// Policy is the one the history was judged under (--policy); Halts
	// counts the halts found and Halt is the one the pause answered, else
	// the newest.
	Policy string              `json:"policy"`
	Halts  int                 `json:"halts"`
	Halt   *protocol.HaltEvent `json:"halt,omitempty"`
	// Answer says how to answer the pause.
	Answer string `json:"answer"`
}

// describePaused is the run's pause, when Temporal's Workflow Pause holds
// it (nil: the run is not paused). It sets a.RunID to the latest run's
// when it is empty.
// A closed run gets an error that says so: nothing can answer it.
func describePaused(ctx context.Context, c client.Client, a *protocol.Answer) (*PausedStatus, error) {
	d, err := c.DescribeWorkflowExecution(ctx, a.WorkflowID, a.RunID)
	if err != nil {
		return nil, fmt.Errorf("describe workflow %s: %w", a.WorkflowID, err)
	}
	if a.RunID == "" {
		a.RunID = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	switch st := d.GetWorkflowExecutionInfo().GetStatus(); st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED:
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED:
		return nil, nil
	default:
		return nil, fmt.Errorf("workflow %s run %s has closed (%s): there is nothing to %s", a.WorkflowID, a.RunID, strings.ToLower(st.String()), a.Action)
	}
	info := d.GetWorkflowExtendedInfo().GetPauseInfo()
	p := &PausedStatus{WorkflowID: a.WorkflowID, RunID: a.RunID, State: "paused",
		PausedBy: info.GetIdentity(), PauseReason: info.GetReason(),
		Watched: strings.HasPrefix(info.GetIdentity(), history.PauseIdentity)}
	if t := info.GetPausedTime(); t != nil {
		p.PausedAt = t.AsTime().UTC()
	}
	return p, nil
}

// judgePaused fills in the halt of p: the judgement of the run's history
// under policy, the one the watcher pauses by.
func judgePaused(ctx context.Context, c client.Client, p *PausedStatus, policy string) error {
	opts, err := analyzeOptions(policy, "")
	if err != nil {
		return err
	}
	an, err := history.NewAnalyzer(history.Options{Guard: opts})
	if err != nil {
		return err
	}
	h, err := history.ExportHistory(ctx, c, p.WorkflowID, p.RunID)
	if err != nil {
		return fmt.Errorf("read the history of workflow %s: %w", p.WorkflowID, err)
	}
	ex := an.History(h, "")
	if ex.Err != nil {
		return fmt.Errorf("judge the history of workflow %s: %w", p.WorkflowID, ex.Err)
	}
	p.Policy = policy
	p.Guarded = ex.Recorded.Version > 0
	halts := ex.Halts()
	p.Halts = len(halts)
	seq := 0
	if now := ex.Paused(); now != nil {
		seq = now.HaltSeq
	}
	for i := range halts {
		if halts[i].Seq == seq || (seq == 0 && i == len(halts)-1) {
			p.Halt = &halts[i]
		}
	}
	return nil
}

// answerPaused answers a run that Temporal's Workflow Pause holds: status
// prints the pause and its halt; resume of the watcher's pause unpauses
// the run (signed or not: the run has no guard inside to check a key, nor
// to take guidance); the other answers say what to do instead.
func answerPaused(ctx context.Context, c client.Client, namespace string, p *PausedStatus, a protocol.Answer, policy string, stdout io.Writer) error {
	unpauseHint := fmt.Sprintf("%s %s --workflow-id %s unpause", progName, answerCommand, a.WorkflowID)
	switch {
	case a.Action == actionStatus:
		if err := judgePaused(ctx, c, p, policy); err != nil {
			return err
		}
		p.Answer = "lift the pause with " + unpauseHint
		if p.Watched && !p.Guarded {
			p.Answer += " (or resume); the run has no guard inside: escalate, guidance and extend do not reach it"
		}
		out, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", out)
		return nil
	case !p.Watched:
		return fmt.Errorf("workflow %s is paused (Temporal's Workflow Pause, by %s): lift the pause with %s, then answer it", a.WorkflowID, p.PausedBy, unpauseHint)
	case a.Action != protocol.ActionResume:
		return fmt.Errorf("workflow %s is paused by worker watch and has no guard inside to %s: resume (or unpause) lets it go on; end it from the UI or with `temporal workflow terminate`", a.WorkflowID, a.Action)
	case a.Guidance != "" || a.Extend != nil:
		return fmt.Errorf("workflow %s is paused by worker watch and has no guard inside to take --guidance or --extend: resume without them, which unpauses it", a.WorkflowID)
	}
	if a.Reason == "" {
		a.Reason = "resumed with " + progName + " " + answerCommand
	}
	if err := unpause(ctx, c, namespace, a, stdout); err != nil {
		return err
	}
	if a.KeyID != "" {
		fmt.Fprintf(stdout, "(not signed: a watched run has no guard to check key %s)\n", a.KeyID)
	}
	return nil
}
