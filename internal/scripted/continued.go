package scripted

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// LateContinue builds its continue-as-new error first, then runs turns,
// then returns the error: the next run (ScriptLoop over rest) must inherit
// the guard's state as of the return, turns included.
func LateContinue(ctx workflow.Context, turns, rest []Turn) (LoopResult, error) {
	can := workflow.NewContinueAsNewError(ctx, ScriptLoop, rest)
	if _, err := ScriptLoop(ctx, turns); err != nil {
		return LoopResult{}, err
	}
	return LoopResult{}, can
}

// AbandonAndContinue starts a call of node and continues as new (to
// ScriptLoop over rest) without waiting for it: an abandoned child, or an
// activity left behind after a Selector timeout.
func AbandonAndContinue(ctx workflow.Context, node string, rest []Turn) (LoopResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	workflow.ExecuteActivity(actx, node, Turn{Node: node, Output: "left behind", Sleep: time.Minute}, 0)
	return LoopResult{}, workflow.NewContinueAsNewError(ctx, ScriptLoop, rest)
}
