package schedule_test

import (
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// Invariant stuck-halts: a loop that keeps
// repeating itself is halted. Plans with feature stuck end in a stuck loop
// (schedule.Stuck: a round of one or two groups, each one call or a few
// concurrent calls of one node, the same results every round), under
// Warnings from 0 to 12 and call budgets lifted out of its way
// (schedule.WithLiveness), so that only the detectors that read
// repetition, and the warnings before them, stand between the loop and its
// halt.
//
// The loop's onset is the first of its calls whose notice header carries a
// warning its loop's calls did not carry just before (the warning of the
// detector's first trip), or its first halt when that comes first (with
// Warnings 0 the first trip is the halt). From the onset, the loop must be
// halted within B = interceptor.HaltBound(opts, callsPerRound) of its
// calls: the calls after the onset and before the halt's first trace (the
// memo that shows it, or its loop.halted echo) are at most B, or the run
// ended first (the loop ran out of rounds, was cancelled or terminated)
// with no more than B calls after the onset. And the loop must trip at
// all: its onset comes within schedule.OnsetRounds rounds of its first
// call, the rounds a loop needs to trip again after starting over and the
// round it started in.
//
// Each reading errs towards a pass, so the check never fails on correct
// behaviour: the onset is placed at the call that first carries the
// warning, at or after the trip; a warning still in force from before the
// loop is not its onset, which moves the onset later; the halt is placed
// at its first trace, which is no later than the halted call would have
// been scheduled; a resume that extended the edge budget of the root
// (resume-extend) lengthens the bound by what it added, for every node.
// Only the loop's own calls are counted, by their tags (StuckTag), not the
// halt handler's unguarded calls of the same nodes.
//
// The driver escalates the halts of a stuck loop (the human stops it), and
// the loop ends at its first escalated call, so that a guard that halts in
// time costs a few rounds, and one that does not costs the whole loop.

// stuckOutcome is what stuck-halts found of one plan's stuck loop.
type stuckOutcome struct {
	warnings, perRound int  // the plan's Warnings; the loop's calls a round
	calls              int  // the loop's calls in the history
	tripped            bool // it reached its onset
	halted             bool // and was halted
	after              int  // its calls after the onset, until the halt or its end
	bound              int  // B
}

// checkStuckHalts checks invariant stuck-halts on the plan's stuck loop, in
// the root's last run.
func (d *driver) checkStuckHalts(hs []hist) {
	s := d.p.StuckLoop()
	if s == nil {
		return
	}
	var last *hist
	for i := range hs {
		if strings.HasPrefix(hs[i].name, "run ") {
			last = &hs[i]
		}
	}
	dc := d.converter()
	if last == nil || !guarded(*last, dc) {
		return
	}
	out, violations := stuckHaltViolations(*last, dc, *s, extended(d.p.Options(), d.extends))
	d.r.stuck = out
	for _, v := range violations {
		d.r.fail("stuck-halts", "%s", v)
	}
}

// extended is o with the edge budget every resume-extend answer raised: a
// resume's extension lengthens the rounds a loop may take to trip again
// (detect.RetripRounds) by what it adds to that budget.
func extended(o interceptor.Options, extends int) interceptor.Options {
	if extends == 0 {
		return o
	}
	edge := o.MaxEdgeWithoutProgress
	if edge == 0 {
		edge = detect.DefaultPolicy().MaxEdgeWithoutProgress
	}
	o.MaxEdgeWithoutProgress = edge + extends*resumeExtension["maxEdgeWithoutProgress"]
	return o
}

// stuckHaltViolations checks stuck loop s in history x of a run under
// opts: see checkStuckHalts.
func stuckHaltViolations(x hist, dc converter.DataConverter, s schedule.Stuck, opts interceptor.Options) (stuckOutcome, []string) {
	cpr := s.CallsPerRound()
	bound, err := interceptor.HaltBound(opts, cpr)
	if err != nil {
		return stuckOutcome{}, []string{fmt.Sprintf("%s: HaltBound: %v", x.name, err)}
	}
	onsetBound := schedule.OnsetRounds(opts) * cpr
	bases, nodes := map[string]bool{}, map[string]bool{}
	for _, g := range s.Round {
		bases[g.Call.Tag], nodes[g.Call.Node] = true, true
	}
	evs := x.h.GetEvents()
	notices := map[int]*protocol.Warning{}
	for _, n := range headerNotices(x) {
		notices[n.event] = n.notice.Warning
	}

	// The loop's calls in order (event indexes), where it began (after the
	// last other guarded call before its first), and its onset: its first
	// call carrying a warning its loop's calls did not carry before.
	var calls []int
	start, onset := -1, -1
	carried := map[string]int{}        // loop → the warning N its calls carry
	loopNodes := map[string][]string{} // loop → its nodes, as its warning lists them
	for i, e := range evs {
		if !isCall(e) {
			continue
		}
		tag := callTag(e, dc)
		if schedule.IsHandlerCall(tag) {
			continue
		}
		ours := bases[schedule.StuckBase(tag)]
		if !ours && len(calls) == 0 {
			start = i
		}
		fresh := false
		if node := headerCallNode(e); node != "" {
			w := notices[i]
			for loop, ns := range loopNodes {
				if (w == nil || warningLoop(w) != loop) && contains(ns, node) {
					// The loop's own call carries its warning no more.
					delete(carried, loop)
				}
			}
			if w != nil {
				n, ok := carried[warningLoop(w)]
				fresh = !ok || n != w.N
				carried[warningLoop(w)], loopNodes[warningLoop(w)] = w.N, w.Nodes
			}
		}
		if ours {
			calls = append(calls, i)
			if fresh && onset < 0 {
				onset = i
			}
		}
	}
	out := stuckOutcome{warnings: opts.Warnings, perRound: cpr, calls: len(calls), bound: bound}
	if len(calls) == 0 {
		return out, nil // the run ended before the loop, or its first call was halted and stopped
	}
	halt := firstStuckHalt(x, dc, start, nodes)
	if halt >= 0 && (onset < 0 || halt < onset) {
		onset = halt
	}
	before := func(at int) int { // the loop's calls before event at
		n := 0
		for _, c := range calls {
			if c < at {
				n++
			}
		}
		return n
	}
	if onset < 0 {
		if len(calls) > onsetBound {
			return out, []string{fmt.Sprintf("%s: the stuck loop made %d calls (%d a round) and tripped no detector (no new warning, no halt): it should trip within %d rounds, %d calls",
				x.name, len(calls), cpr, schedule.OnsetRounds(opts), onsetBound)}
		}
		return out, nil
	}
	out.tripped = true
	o := before(onset)
	end := len(calls)
	if halt >= 0 {
		out.halted, end = true, before(halt)
	}
	out.after = end - o
	var violations []string
	if o > onsetBound {
		violations = append(violations, fmt.Sprintf("%s: the stuck loop (%d calls a round) first tripped at its call %d (event %d), after more than %d rounds, %d calls",
			x.name, cpr, o+1, onset+1, schedule.OnsetRounds(opts), onsetBound))
	}
	if out.after > bound {
		what := fmt.Sprintf("was halted at event %d", halt+1)
		if halt < 0 {
			what = "was never halted"
		}
		violations = append(violations, fmt.Sprintf("%s: the stuck loop (%d calls a round, Warnings %d) made %d calls after its onset (its call %d, event %d) and %s: B = %d",
			x.name, cpr, opts.Warnings, out.after, o+1, onset+1, what, bound))
	}
	return out, violations
}

// warningLoop names a warning's loop.
func warningLoop(w *protocol.Warning) string {
	if w.Loop != "" {
		return w.Loop
	}
	return w.Node
}

// firstStuckHalt is the event index of the first trace (the memo that
// shows it, or its loop.halted echo, whichever comes first) of the first
// halt of the execution at a node of the stuck loop after event start, or
// -1.
func firstStuckHalt(x hist, dc converter.DataConverter, start int, nodes map[string]bool) int {
	shown := map[int]int{} // seq → index of the first memo showing it
	first := -1
	for i, e := range x.h.GetEvents() {
		if m, ok := guardMemo(e, dc); ok {
			if _, seen := shown[m.Seq]; m.Seq > 0 && !seen && (m.State == string(protocol.StateHalted) || m.State == string(protocol.StateEscalated)) {
				shown[m.Seq] = i
			}
			continue
		}
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a == nil || a.GetSignalName() != protocol.DefaultHaltedSignal || len(a.GetInput().GetPayloads()) == 0 {
			continue
		}
		var ev protocol.HaltEvent
		if dc.FromPayload(a.GetInput().GetPayloads()[0], &ev) != nil || !ownEcho(x.h, ev) || !nodes[ev.Node] {
			continue
		}
		at := i
		if m, ok := shown[ev.Seq]; ok && m < at {
			at = m
		}
		if at > start && (first < 0 || at < first) {
			first = at
		}
	}
	return first
}

// callTag is the plan tag of an activity call (its input's), or "".
func callTag(e *historypb.HistoryEvent, dc converter.DataConverter) string {
	if e.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
		return ""
	}
	ps := e.GetActivityTaskScheduledEventAttributes().GetInput().GetPayloads()
	var in schedule.AgentInput
	if len(ps) == 0 || dc.FromPayload(ps[0], &in) != nil {
		return ""
	}
	return in.Tag
}
