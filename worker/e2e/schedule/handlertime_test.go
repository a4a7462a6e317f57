package schedule_test

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// Invariant handler-time: a halt handler's
// time, like any paused time, is never charged to a runtime budget
// (MaxNodeRuntime, MaxCycleRuntime, a node's MaxRuntime). Plans with
// feature runtime run under those budgets (schedule.WithRuntimeBudget),
// and their first halt's handler sleeps twice the budget before it
// resumes (schedule.HandlerSlow).
//
// Every halt on node_runtime or cycle_runtime charges the loop a runtime
// C, which its message states ("cycle Code→Verify has run for 3.2s, limit
// 3s"; "Code ran for 2.1s, limit 2s"). The check bounds what C can be
// when paused time is not charged: the loop's time runs from no earlier
// than L (the first call of the node, or of the cycle's anchor, HaltEvent
// .Loop; or the previous halt of the same budget and loop, which reset
// it), so C is at most U = (T − L) − P, where T is the halt's workflow
// time and P the time the execution stood paused on halts it resumed
// between L and T. C > U + runtimeMargin fails. A guard that charged a
// handler's time (or a human's) halts the loop's first call after the
// resume with C ≥ the pause, where U is what the loop ran besides: it
// fails by about the pause's length, twice the budget for a slow handler.
//
// Why it cannot be flaky: every instant it reads is a history timestamp,
// the clock the guard itself reads (workflow.Now is the start time of the
// workflow task, or the time a local activity's result was recorded, on
// the same host). A loaded machine stretches the loop's time and the
// pauses alike for the guard and for the check; it moves no bound. Each
// bound errs on the side of a larger U, never a smaller one:
//
//   - T is HaltEvent.WorkflowTime, the guard's own now at the trip;
//   - L is a lower bound of the loop's start: the start of the workflow
//     task that issued the node's first activity or child call (its
//     workflow.Now is that or later), the start of the chain of runs for a
//     local activity node (its marker can come a task later than its
//     call), and the previous reset's halt time (the reset happens when
//     that halt ends, later);
//   - a pause counts from its halted memo's event time (recorded after
//     the task that began the halt, so after the guard's pause began) to
//     the start of the task whose memo says running again (the guard
//     ended it in that task, at that time or later); so each pause P
//     holds is inside the one the guard took off, and only pauses wholly
//     inside [L, T] count. An escalated or cancelled halt is not a pause
//     the guard takes off (it resets or ends the loop instead), and is
//     not counted either.
//
// So on correct behaviour C ≤ U exactly; runtimeMargin (one second) only
// absorbs what this model leaves out, and is far below a slow handler's
// HandlerSlowSleep (six seconds) that a wrong guard would add.
const runtimeMargin = time.Second

// runtimeDetectors are the detectors of the runtime budgets.
var runtimeDetectors = map[detect.Detector]bool{detect.DetectorNodeRuntime: true, detect.DetectorCycleRuntime: true}

// chargedRuntime reads the runtime a runtime halt's message charges (see
// detect's checkNode and checkCycle): "... ran for D, limit L" or "...
// has run for D, limit L".
var chargedRuntime = regexp.MustCompile(` for ([0-9][^ ,]*), limit [^ ,]+$`)

// runtimeKey is the node whose first step starts the runtime a runtime
// halt charges: node_runtime charges the node's own steps; cycle_runtime
// the time since the cycle's anchor, HaltEvent.Loop, first ran (an
// anchor, once replaced by a member that ran earlier, never comes back,
// so two halts with one Loop are one cycle's).
func runtimeKey(ev protocol.HaltEvent) string {
	if ev.Detector == detect.DetectorCycleRuntime {
		return ev.Loop
	}
	return ev.Node
}

// checkHandlerTime checks invariant handler-time on the root's chain of
// runs and on each child, and counts the halts it checked and the halts a
// halt handler resumed after taking longer than every runtime budget.
func (d *driver) checkHandlerTime(hs []hist) {
	dc := d.converter()
	// The root's runs come first, in order; then one history per child.
	var chains [][]hist
	for _, x := range hs {
		if strings.HasPrefix(x.name, "run ") && len(chains) == 1 {
			chains[0] = append(chains[0], x)
			continue
		}
		chains = append(chains, []hist{x})
	}
	for _, c := range chains {
		if !guarded(c[0], dc) {
			continue
		}
		got := runtimeViolations(c, dc, resumedOnly)
		d.r.runtimeHalts += got.checked
		d.r.runtimeSlack = append(d.r.runtimeSlack, got.slacks...)
		for _, v := range got.violations {
			d.r.fail("handler-time", "%s", v)
		}
		got = runtimeViolations(c, dc, everyPause)
		d.r.pausedHalts += got.checked
		for end, n := range got.takenOff {
			d.r.pausesTakenOff[end] += n
		}
		for _, v := range got.violations {
			d.r.fail("paused-time", "%s", v)
		}
	}
	for id, byseq := range d.lad.handled {
		for seq, h := range byseq {
			if h.Action == protocol.ActionResume && h.Took > schedule.RuntimeBudget && d.lad.decided[fmt.Sprintf("%s/%d", id, seq)] {
				d.r.slowResumes++
			}
		}
	}
}

// guarded reports whether the guard guards x: its version marker is the
// guard's (with dc: under the codec the marker is encrypted too, and
// Inspect alone reads version 0).
func guarded(x hist, dc converter.DataConverter) bool {
	return testsuite.InspectWith(x.h, dc).GuardVersion == interceptor.GuardVersion
}

// span is one pause, from and to as handler-time bounds it, and how it
// ended.
type span struct {
	from, to time.Time
	end      pauseEnd
}

// pauseEnd is how a pause ended, as the history shows it: the memo says
// running again (resumed; canceled when the workflow's cancellation was
// requested during the pause), or escalated.
type pauseEnd string

const (
	pauseResumed   pauseEnd = "resumed"
	pauseEscalated pauseEnd = "escalated"
	pauseCanceled  pauseEnd = "canceled"
)

// resumedOnly and everyPause say which pauses a check takes off the
// loop's time: handler-time's, the resumed ones; paused-time's, all.
func resumedOnly(s span) bool { return s.end == pauseResumed }
func everyPause(span) bool    { return true }

// runtimeCheck is what runtimeViolations found on one chain: how many
// runtime halts it checked, by how much each charge it could read stayed
// within its bound (U − C), how many pauses of each ending it took off
// those halts' loops, and the violations.
type runtimeCheck struct {
	checked    int
	slacks     []time.Duration
	takenOff   map[pauseEnd]int
	violations []string
}

// runtimeViolations checks the runtime halts of one chain of runs (runs
// joined by continue-as-new, whose guard state carries over, in order; or
// one child's history), taking off each loop's time the pauses counts
// accepts.
func runtimeViolations(chain []hist, dc converter.DataConverter, counts func(span) bool) runtimeCheck {
	type halt struct {
		ev    protocol.HaltEvent
		where string
	}
	var (
		start  time.Time
		first  = map[string]time.Time{} // node → start of the task of its first activity or child call
		pauses []span
		halts  []halt
		// ended says how each halt's pause ended, by seq.
		ended = map[int]pauseEnd{}
	)
	for k, x := range chain {
		evs := x.h.GetEvents()
		if k == 0 && len(evs) > 0 {
			start = evs[0].GetEventTime().AsTime()
		}
		var task time.Time // start of the latest workflow task
		var open int       // seq of the halt the memo shows, 0: none
		var from time.Time // when that memo was recorded
		var cancel bool    // the cancellation was requested during it
		seen := map[int]bool{}
		for i, e := range evs {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				task = e.GetEventTime().AsTime()
				continue
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
				cancel = open > 0
				continue
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
				if n := headerCallNode(e); n != "" {
					if _, ok := first[n]; !ok {
						first[n] = task
					}
				}
				continue
			}
			if m, ok := guardMemo(e, dc); ok {
				switch {
				case m.State == string(protocol.StateHalted):
					if m.Seq != open { // a memo written again for the same halt is not a new pause
						open, from, cancel = m.Seq, e.GetEventTime().AsTime(), false
					}
				case open > 0:
					end := pauseEscalated
					if m.State == string(protocol.StateRunning) {
						end = pauseResumed
						if cancel {
							end = pauseCanceled
						}
					}
					if task.After(from) {
						pauses = append(pauses, span{from: from, to: task, end: end})
					}
					ended[open] = end
					open = 0
				}
				continue
			}
			a := e.GetWorkflowExecutionSignaledEventAttributes()
			if a == nil || a.GetSignalName() != protocol.DefaultHaltedSignal || len(a.GetInput().GetPayloads()) == 0 {
				continue
			}
			var ev protocol.HaltEvent
			if dc.FromPayload(a.GetInput().GetPayloads()[0], &ev) != nil || !ownEcho(x.h, ev) || seen[ev.Seq] {
				continue
			}
			seen[ev.Seq] = true
			halts = append(halts, halt{ev: ev, where: fmt.Sprintf("%s: halt %d (echo event %d)", x.name, ev.Seq, i+1)})
		}
	}
	res := runtimeCheck{takenOff: map[pauseEnd]int{}}
	for j, h := range halts {
		if !runtimeDetectors[h.ev.Detector] {
			continue
		}
		res.checked++
		key := runtimeKey(h.ev)
		from, why := start, "the start of the chain of runs"
		if f, ok := first[key]; ok && key != "" {
			from, why = f, "the first call of "+key
		}
		for _, prev := range halts[:j] {
			// A cancellation ends a halt without starting its detector over
			// (the workflow is ending): only the other endings reset it.
			if prev.ev.Detector == h.ev.Detector && key != "" && runtimeKey(prev.ev) == key && prev.ev.WorkflowTime.After(from) && ended[prev.ev.Seq] != pauseCanceled {
				from, why = prev.ev.WorkflowTime, fmt.Sprintf("halt %d, which reset it", prev.ev.Seq)
			}
		}
		to := h.ev.WorkflowTime
		var paused time.Duration
		for _, p := range pauses {
			if counts(p) && !p.from.Before(from) && !p.to.After(to) {
				paused += p.to.Sub(p.from)
				res.takenOff[p.end]++
			}
		}
		bound := to.Sub(from) - paused
		m := chargedRuntime.FindStringSubmatch(h.ev.Message)
		var charged time.Duration
		var err error
		if m == nil {
			err = fmt.Errorf("no runtime in the message")
		} else {
			charged, err = time.ParseDuration(m[1])
		}
		if err == nil {
			res.slacks = append(res.slacks, bound-charged)
		}
		switch {
		case err != nil:
			res.violations = append(res.violations, fmt.Sprintf("%s: cannot read the runtime %s charged from %q: %v", h.where, h.ev.Detector, h.ev.Message, err))
		case charged > bound+runtimeMargin:
			res.violations = append(res.violations, fmt.Sprintf("%s: %s at %s (loop %s) charged %s (%q), and the loop ran at most %s unpaused: %s since %s, less %s paused on halts meanwhile (%s)",
				h.where, h.ev.Detector, h.ev.Node, h.ev.Loop, charged, h.ev.Message, bound, to.Sub(from), why, paused, pausesIn(pauses, counts, from, to)))
		}
	}
	return res
}

// pausesIn says which pauses a violation's bound took off, and how each
// ended.
func pausesIn(pauses []span, counts func(span) bool, from, to time.Time) string {
	var parts []string
	for _, p := range pauses {
		if counts(p) && !p.from.Before(from) && !p.to.After(to) {
			parts = append(parts, fmt.Sprintf("%s %s", p.to.Sub(p.from).Round(time.Millisecond), p.end))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
