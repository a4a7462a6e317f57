package interceptor

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Example_core runs the core's calling order as a driver does, without a
// workflow: a loop of one tool that keeps getting the same result is
// warned once (Options.Warnings), then halted and held until a human
// resumes it; a user's message is outside input, and the run then
// continues as new. The guard runs the same steps with commands and waits
// between them, the Judge with verdicts.
func Example_core() {
	cfg, h, err := buildConfig(Options{Warnings: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	// What the guard's setup (or Judge.Start) does for a new execution.
	c := &core{cfg: cfg, hooks: h, version: guardVersion, active: true,
		info: &workflow.Info{WorkflowExecution: workflow.Execution{ID: "agent-1", RunID: "r1"}}}
	c.state = detect.NewState(c.cfg.Policy)
	c.pause = newPause()

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0 // the call being admitted
	// onTrip is the driver's part at a trip: the core decides, the
	// driver tells (here: prints) and, for a held halt, waits for the
	// decision and hands it back.
	onTrip := func(t *detect.Trip) (time.Time, bool, error) {
		w, ev, policy := c.trip("Code", t, now)
		if w != nil {
			fmt.Printf("call %d: warning %d/%d at %s: %s\n", n, w.N, w.Of, w.Node, w.Reason)
			return now, true, nil
		}
		fmt.Printf("call %d: halt %d at %s: %s (%s)\n", n, ev.Seq, ev.Node, ev.HaltReason, policy)
		// Here the guard logs, counts and raises loop.halted.
		esc, held := c.raised(t, policy)
		switch {
		case esc != nil:
			c.decided(t, *esc, detect.Extension{}, now)
			return now, false, fmt.Errorf("escalated")
		case !held:
			return now, true, nil
		}
		// No halt handler: the halt is held for a human, whose resume
		// arrives (a signal or an update) a minute later.
		c.hold()
		now = now.Add(time.Minute)
		answer, _ := converter.GetDefaultDataConverter().ToPayload(protocol.ResumeRequest{By: "ana", Reason: "new test data"})
		took := c.signal(c.cfg.ResumeSignal, func() bool {
			return c.takeInput(c.cfg.ResumeSignal, answer, now) == nil
		}, nil) // own: only asked of a loop.halted
		d := *c.pause.decision
		c.decided(t, d, detect.Extension{}, now)
		fmt.Printf("%s taken: %v, by %s: %s\n", c.cfg.ResumeSignal, took, d.By, d.Reason)
		return now, true, nil
	}
	call := func() {
		node, _ := c.callNode(KindActivity, "Code", nil)
		ref, ok, err := c.begin(node, now, onTrip)
		if !ok {
			fmt.Println("call", n, "not made:", err)
			return
		}
		c.called(node, ref.Seq)
		// The call runs; the driver reads its result at the next call or
		// wait, at the time the core charges it up to.
		now = now.Add(time.Second)
		obs, canceled, _ := c.observe(node, []byte(`"the same patch"`), nil)
		c.result(ref, obs, canceled, c.resultAt(now))
	}
	for n = 1; n <= 8; n++ {
		if n == 8 {
			// The user says something: not the guard's signal, so input.
			took := c.signal("message", func() bool { return false }, func() bool { return false })
			fmt.Println("message taken by the guard:", took)
		}
		call()
	}
	c.endRun(now) // the run continues as new: nothing in flight, input told
	fmt.Println("halts:", c.halts)
	// Output:
	// call 4: warning 1/1 at Code: stalled
	// call 7: halt 1 at Code: stalled (pause)
	// resume taken: true, by ana: new test data
	// message taken by the guard: false
	// halts: 1
}
