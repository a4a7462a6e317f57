package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
)

// TaskQueue is the task queue of the sample worker.
const TaskQueue = "loopguard-demo"

// Defaults of LoopInput.
const (
	// DefaultMaxTurns bounds a loop that nothing else stops: well above the
	// guard's default budgets (8 cycle iterations, 10 steps per node), so
	// that a guarded run always halts before it gives up.
	DefaultMaxTurns = 20
	// DefaultPollInterval is PollingJob's wait between polls.
	DefaultPollInterval = time.Second
)

// The outcomes of a loop (LoopResult.Outcome).
const (
	// OutcomeCompleted: the loop reached its goal (tests pass, the planner
	// answered, the job finished).
	OutcomeCompleted = "completed"
	// OutcomeEscalated: the guard halted the loop and a human escalated it.
	OutcomeEscalated = "escalated"
	// OutcomeGaveUp: the loop used up LoopInput.MaxTurns without reaching
	// its goal.
	OutcomeGaveUp = "gave_up"
)

// LoopInput starts a sample loop.
type LoopInput struct {
	// Scenario selects the agents' script: one of the activities.Scenario*
	// names.
	Scenario string `json:"scenario"`
	// Task is what the agents are asked to do (for the logs and prompts).
	Task string `json:"task,omitempty"`
	// MaxTurns is the loop's own bound: coder turns, planner steps, child
	// iterations or polls. Default DefaultMaxTurns.
	MaxTurns int `json:"maxTurns,omitempty"`
	// PollInterval is PollingJob's wait between polls. Default
	// DefaultPollInterval.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// Review makes CoderVerifierLoop ask the reviewer at a halt, before a
	// human (its halt handler calls the Review activity and resumes with
	// the reviewer's guidance, if any).
	Review bool `json:"review,omitempty"`
}

func (in LoopInput) withDefaults() LoopInput {
	if in.MaxTurns <= 0 {
		in.MaxTurns = DefaultMaxTurns
	}
	if in.PollInterval <= 0 {
		in.PollInterval = DefaultPollInterval
	}
	if in.Task == "" {
		in.Task = "make the test suite pass"
	}
	return in
}

func (in LoopInput) validate() error {
	if !activities.IsScenario(in.Scenario) {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("unknown scenario %q (want one of %v)", in.Scenario, activities.ScenarioNames()),
			activities.ErrUnknownScenario, nil)
	}
	return nil
}

// LoopResult is the result of every sample loop.
type LoopResult struct {
	Scenario string `json:"scenario"`
	// Outcome is OutcomeCompleted, OutcomeEscalated or OutcomeGaveUp.
	Outcome string `json:"outcome"`
	// Iterations counts the turns (steps, child iterations, polls) the loop
	// started, the one a halt interrupted included.
	Iterations int `json:"iterations"`
	// Final is the best result so far: the passing patch, the best
	// verified patch (fewest failing tests, the latest on ties), the last
	// unverified patch when none was verified, the planner's answer or last
	// findings, or the job summary.
	Final string `json:"final"`
	// Failing is the failing test count of Final: -1 when Final was never
	// verified or the loop has no verifier.
	Failing int `json:"failing"`
	// LastError is the last error the loop went on after, if any.
	LastError string `json:"lastError,omitempty"`
	// Escalation is the human's decision and the halt it answered, when
	// Outcome is OutcomeEscalated.
	Escalation *interceptor.Escalation `json:"escalation,omitempty"`
}

func newResult(in LoopInput) LoopResult {
	return LoopResult{Scenario: in.Scenario, Outcome: OutcomeGaveUp, Failing: -1}
}

// sawPatch records a patch not verified yet: it is Final only while no
// patch has been verified.
func (r *LoopResult) sawPatch(diff string) {
	if r.Failing < 0 {
		r.Final = diff
	}
}

// verified records a verified patch, keeping the best.
func (r *LoopResult) verified(diff string, failing int) {
	if r.Failing < 0 || failing <= r.Failing {
		r.Final, r.Failing = diff, failing
	}
}

// failed handles the error of a call of the loop. It reports whether the
// loop must end, with the error the workflow returns: nil (and Outcome
// escalated) when a human escalated a halt, the error itself when the
// workflow is being cancelled. Any other error is recorded in LastError
// and the loop goes on: agents fail, and an agent loop feeds the failure
// back to the next turn.
func (r *LoopResult) failed(ctx workflow.Context, err error) (stop bool, _ error) {
	if interceptor.IsEscalated(err) {
		esc, ok := interceptor.EscalationFrom(err)
		if !ok {
			esc = interceptor.Escalation{Reason: errMessage(err)}
		}
		r.Outcome, r.Escalation = OutcomeEscalated, &esc
		workflow.GetLogger(ctx).Warn("Loop escalated by a human",
			"reason", esc.Reason, "by", esc.By, "haltReason", esc.Halt.HaltReason, "node", esc.Halt.Node)
		return true, nil
	}
	if temporal.IsCanceledError(err) || ctx.Err() != nil {
		return true, err
	}
	r.LastError = errMessage(err)
	workflow.GetLogger(ctx).Warn("Agent call failed, going on", "error", r.LastError)
	return false, nil
}

// errMessage is the message of the application error behind err (without
// the activity or child workflow wrapper's event ids), or err's message.
func errMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	return err.Error()
}

// activityOptions are the sample loops' activity options: a short timeout
// and one retry, except for the errors that retrying cannot fix.
func activityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        2,
			NonRetryableErrorTypes: []string{activities.ErrSandboxUnavailable, activities.ErrUnknownScenario},
		},
	}
}
