package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// CoderVerifierLoop is the classic agent loop: the coder proposes a patch,
// the verifier runs the tests against it, and the failing tests go back to
// the coder, until the tests pass or in.MaxTurns turns have run.
//
// With the guard installed, a loop that stops making progress is paused at
// the call that would continue it; if a human escalates, the call returns a
// LoopEscalated error and the workflow completes with Outcome "escalated",
// the human's reason and the best patch so far.
func CoderVerifierLoop(ctx workflow.Context, in LoopInput) (LoopResult, error) {
	in = in.withDefaults()
	if err := in.validate(); err != nil {
		return LoopResult{}, err
	}
	logger := workflow.GetLogger(ctx)
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var agents *activities.Agents
	if in.Review {
		if err := interceptor.SetHaltHandler(ctx, askReviewer(in)); err != nil {
			logger.Warn("No reviewer: a human answers halts", "error", err)
		}
	}

	res := newResult(in)
	var failingTests []string
	var lastError string
	for turn := 1; turn <= in.MaxTurns; turn++ {
		res.Iterations = turn

		var patch activities.Patch
		err := workflow.ExecuteActivity(ctx, agents.Code, activities.CodeRequest{
			Scenario:     in.Scenario,
			Task:         in.Task,
			Turn:         turn,
			FailingTests: failingTests,
			LastError:    lastError,
		}).Get(ctx, &patch)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			lastError = res.LastError
			continue
		}
		res.sawPatch(patch.Diff)

		var verdict activities.Verdict
		err = workflow.ExecuteActivity(ctx, agents.Verify, activities.VerifyRequest{
			Scenario: in.Scenario,
			Turn:     turn,
			Patch:    patch,
		}).Get(ctx, &verdict)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			lastError = res.LastError
			continue
		}
		lastError, failingTests = "", verdict.FailingTests
		res.verified(patch.Diff, verdict.Failing)
		logger.Info("Turn verified", "turn", turn, "patch", patch.ID, "failing", verdict.Failing)
		if verdict.Passed {
			res.Outcome, res.Final, res.Failing = OutcomeCompleted, patch.Diff, 0
			return res, nil
		}
	}
	logger.Warn("Coder and verifier gave up", "turns", in.MaxTurns, "failing", res.Failing)
	return res, nil
}

// askReviewer is CoderVerifierLoop's halt handler: before a human is
// asked, the reviewer looks at the halt. Its guidance resumes the loop and
// reaches the coder in its notice; no guidance, or a failed review, leaves
// the halt to a human.
func askReviewer(in LoopInput) interceptor.HaltHandler {
	return func(ctx workflow.Context, halt protocol.HaltEvent) (interceptor.HandlerDecision, error) {
		var agents *activities.Agents
		var note activities.ReviewNote
		err := workflow.ExecuteActivity(ctx, agents.Review, activities.ReviewRequest{
			Scenario: in.Scenario,
			Reason:   string(halt.HaltReason),
			Node:     halt.Node,
			Message:  halt.Message,
			Warnings: len(halt.Warnings),
		}).Get(ctx, &note)
		if err != nil || note.Guidance == "" {
			return interceptor.HandlerDecision{}, err
		}
		return interceptor.HandlerDecision{
			Action:   protocol.ActionResume,
			Reason:   "the reviewer suggested another approach",
			Guidance: note.Guidance,
		}, nil
	}
}

// PlannerResearcherLoop is a planner that asks a researcher questions
// until it can answer (seed 003's graph: planner → researcher → planner).
// It ends when the planner answers (Outcome "completed", Final the answer),
// after in.MaxTurns planner steps (Outcome "gave_up", Final the last
// findings), or when a human escalates a halt.
func PlannerResearcherLoop(ctx workflow.Context, in LoopInput) (LoopResult, error) {
	in = in.withDefaults()
	if err := in.validate(); err != nil {
		return LoopResult{}, err
	}
	logger := workflow.GetLogger(ctx)
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var agents *activities.Agents

	res := newResult(in)
	var lastFindings string
	for step := 1; step <= in.MaxTurns; step++ {
		res.Iterations = step

		var plan activities.PlanStep
		err := workflow.ExecuteActivity(ctx, agents.Plan, activities.PlanRequest{
			Scenario:     in.Scenario,
			Goal:         in.Task,
			Step:         step,
			LastFindings: lastFindings,
		}).Get(ctx, &plan)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			continue
		}
		if plan.Next == activities.NextDone {
			res.Outcome, res.Final = OutcomeCompleted, plan.Answer
			return res, nil
		}

		var findings activities.Findings
		err = workflow.ExecuteActivity(ctx, agents.Research, activities.ResearchRequest{
			Scenario: in.Scenario,
			Step:     step,
			Query:    plan.Query,
		}).Get(ctx, &findings)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			continue
		}
		lastFindings, res.Final = findings.Summary, findings.Summary
		logger.Info("Research step", "step", step, "query", plan.Query, "new", findings.NewInformation)
	}
	logger.Warn("Planner gave up", "steps", in.MaxTurns)
	return res, nil
}

// IterationInput starts one IterationWorkflow.
type IterationInput struct {
	Scenario  string `json:"scenario"`
	Task      string `json:"task,omitempty"`
	Iteration int    `json:"iteration"`
	// FailingTests and LastError are the previous iteration's feedback.
	FailingTests []string `json:"failingTests,omitempty"`
	LastError    string   `json:"lastError,omitempty"`
}

// IterationResult is one iteration's patch and verdict. It does not repeat
// the iteration number: two iterations that achieve the same thing have
// the same result (but for GeneratedAt), as the guard must see them.
type IterationResult struct {
	PatchID      string   `json:"patchId"`
	Diff         string   `json:"diff"`
	Passed       bool     `json:"passed"`
	Failing      int      `json:"failing"`
	FailingTests []string `json:"failingTests"`
	// Cost is the tokens of both agents.
	Cost        float64 `json:"cost"`
	GeneratedAt string  `json:"generatedAt"`
}

// ChildIterationLoop is the coder ↔ verifier loop with one child workflow
// (IterationWorkflow) per iteration, as users write it to keep each
// iteration's history apart. The guard sees the parent's loop as the child
// workflow type calling itself again and again (a self-loop).
func ChildIterationLoop(ctx workflow.Context, in LoopInput) (LoopResult, error) {
	in = in.withDefaults()
	if err := in.validate(); err != nil {
		return LoopResult{}, err
	}
	logger := workflow.GetLogger(ctx)
	parentID := workflow.GetInfo(ctx).WorkflowExecution.ID

	res := newResult(in)
	var failingTests []string
	var lastError string
	for iter := 1; iter <= in.MaxTurns; iter++ {
		res.Iterations = iter
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: fmt.Sprintf("%s-iteration-%d", parentID, iter),
		})
		var out IterationResult
		err := workflow.ExecuteChildWorkflow(cctx, IterationWorkflow, IterationInput{
			Scenario:     in.Scenario,
			Task:         in.Task,
			Iteration:    iter,
			FailingTests: failingTests,
			LastError:    lastError,
		}).Get(ctx, &out)
		if err != nil {
			// A halt escalated in the parent, or in the child (the child
			// fails with the LoopEscalated error), ends the loop alike.
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			lastError = res.LastError
			continue
		}
		lastError, failingTests = "", out.FailingTests
		res.verified(out.Diff, out.Failing)
		logger.Info("Iteration done", "iteration", iter, "patch", out.PatchID, "failing", out.Failing)
		if out.Passed {
			res.Outcome, res.Final, res.Failing = OutcomeCompleted, out.Diff, 0
			return res, nil
		}
	}
	logger.Warn("Iterations gave up", "iterations", in.MaxTurns, "failing", res.Failing)
	return res, nil
}

// IterationWorkflow is one iteration of ChildIterationLoop: a patch and its
// verdict. It returns the agents' errors as they are, a LoopEscalated one
// included, for the parent to decide.
func IterationWorkflow(ctx workflow.Context, in IterationInput) (IterationResult, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var agents *activities.Agents

	var patch activities.Patch
	if err := workflow.ExecuteActivity(ctx, agents.Code, activities.CodeRequest{
		Scenario:     in.Scenario,
		Task:         in.Task,
		Turn:         in.Iteration,
		FailingTests: in.FailingTests,
		LastError:    in.LastError,
	}).Get(ctx, &patch); err != nil {
		return IterationResult{}, err
	}
	var verdict activities.Verdict
	if err := workflow.ExecuteActivity(ctx, agents.Verify, activities.VerifyRequest{
		Scenario: in.Scenario,
		Turn:     in.Iteration,
		Patch:    patch,
	}).Get(ctx, &verdict); err != nil {
		return IterationResult{}, err
	}
	return IterationResult{
		PatchID:      patch.ID,
		Diff:         patch.Diff,
		Passed:       verdict.Passed,
		Failing:      verdict.Failing,
		FailingTests: verdict.FailingTests,
		Cost:         patch.Cost + verdict.Cost,
		GeneratedAt:  verdict.GeneratedAt,
	}, nil
}

// PollingJob waits for a long-running job (a CI run the agent started) by
// polling CheckStatus every in.PollInterval, then has the result
// summarised. The poller repeats itself and runs more than ten times by
// design: the guard must leave it alone (CheckStatus is Exempt in
// GuardOptions). Iterations counts the polls; Final is the summary.
func PollingJob(ctx workflow.Context, in LoopInput) (LoopResult, error) {
	in = in.withDefaults()
	if err := in.validate(); err != nil {
		return LoopResult{}, err
	}
	logger := workflow.GetLogger(ctx)
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var agents *activities.Agents
	jobID := "job-" + workflow.GetInfo(ctx).WorkflowExecution.ID

	res := newResult(in)
	for poll := 1; poll <= in.MaxTurns; poll++ {
		if poll > 1 {
			if err := workflow.Sleep(ctx, in.PollInterval); err != nil {
				return res, err
			}
		}
		res.Iterations = poll

		var status activities.JobStatus
		err := workflow.ExecuteActivity(ctx, agents.CheckStatus, activities.StatusRequest{
			Scenario: in.Scenario,
			JobID:    jobID,
			Poll:     poll,
		}).Get(ctx, &status)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			continue
		}
		res.Final = status.Message
		if status.State != activities.JobDone {
			logger.Debug("Job still running", "poll", poll, "progress", status.Progress)
			continue
		}

		var summary activities.Summary
		err = workflow.ExecuteActivity(ctx, agents.Summarize, activities.SummarizeRequest{
			Scenario: in.Scenario,
			Status:   status,
			Polls:    poll,
		}).Get(ctx, &summary)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			// The job is done; only its summary is missing.
			summary.Text = fmt.Sprintf("job %s done (no summary: %s)", jobID, res.LastError)
		}
		res.Outcome, res.Final = OutcomeCompleted, summary.Text
		return res, nil
	}
	logger.Warn("Job still running after the last poll", "polls", in.MaxTurns)
	return res, nil
}
