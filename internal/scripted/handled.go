package scripted

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// ReviewNode is the activity HandledLoop's halt handler calls: a reviewer,
// whose calls the guard does not guard.
const ReviewNode = "Review"

// HandledResult is what HandledLoop returns.
type HandledResult struct {
	Calls int `json:"calls"`
	// Escalated counts the calls that returned LoopEscalated; the loop went
	// on after each.
	Escalated int `json:"escalated"`
	// Reviews counts the halt handler's runs.
	Reviews int `json:"reviews"`
}

// Handling is how HandledLoop's halt handler works before it decides.
type Handling struct {
	// AtOnce decides without calling ReviewNode.
	AtOnce bool `json:"atOnce,omitempty"`
	// Sleep is workflow time the handler waits first.
	Sleep time.Duration `json:"sleep,omitempty"`
}

// HandledLoop runs the turns in order, each result read before the next
// call, with a halt handler that sleeps how.Sleep, calls ReviewNode
// (unless how.AtOnce) and then decides halt n (from 1) with
// decisions[n-1], or resumes when decisions has no n-th entry; an empty
// decision hands the halt to a human. A call that returns
// LoopEscalated is skipped and the loop goes on with the next turn, as an
// agent that takes an escalation as "drop this approach" would.
func HandledLoop(ctx workflow.Context, turns []Turn, decisions []protocol.Action, how Handling) (HandledResult, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var res HandledResult
	review := func(ctx workflow.Context, h protocol.HaltEvent) (interceptor.HandlerDecision, error) {
		res.Reviews++
		if how.Sleep > 0 {
			if err := workflow.Sleep(ctx, how.Sleep); err != nil {
				return interceptor.HandlerDecision{}, err
			}
		}
		if !how.AtOnce {
			var note AgentResult
			if err := workflow.ExecuteActivity(ctx, ReviewNode, Turn{Node: ReviewNode, Output: "reviewed"}, h.Seq).Get(ctx, &note); err != nil {
				return interceptor.HandlerDecision{}, err
			}
		}
		action := protocol.ActionResume
		if h.Seq <= len(decisions) {
			action = decisions[h.Seq-1]
		}
		return interceptor.HandlerDecision{Action: action, Reason: "reviewed", Guidance: fmt.Sprintf("review %d: try another way", h.Seq)}, nil
	}
	if err := interceptor.SetHaltHandler(ctx, review); err != nil {
		return res, err
	}
	for i, t := range turns {
		var out AgentResult
		err := workflow.ExecuteActivity(ctx, t.Node, t, i).Get(ctx, &out)
		res.Calls++
		if interceptor.IsEscalated(err) {
			res.Escalated++
			continue
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}
