package schedule_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// minWindowCalls is the fewest guarded calls any detector that reads
// repetition needs to trip on a loop that started over: a repetition is
// two of something (two equal results or errors, two rounds of a period,
// an edge counted over its limit of at least one), and starting over
// (detect.State.Resume) leaves none of it behind for the
// loop's nodes. The real window is usually longer (RepeatThreshold rounds
// of the loop's period); the check takes the bound that holds for every
// detector and profile, so that it never fails on correct behaviour.
const minWindowCalls = 2

// repetitionReaders are the detectors a reset puts a barrier in front of
// (docs/detection.md, "Starting over"). The budgets (node_calls,
// cycle_iterations, total_calls, the runtimes and costs) count on across
// a reset unless extended, and a human's stop halts at once: they may halt
// sooner, and are not checked.
var repetitionReaders = map[detect.Detector]bool{
	detect.DetectorIdenticalOutput:       true,
	detect.DetectorOutputOscillation:     true,
	detect.DetectorTransitionOscillation: true,
	detect.DetectorRepeatedError:         true,
	detect.DetectorEdgeWithoutProgress:   true,
	detect.DetectorUnchangedProgress:     true,
	detect.DetectorNoImprovement:         true,
}

// checkResetWindow checks invariant reset-window on every guarded
// history: see resetWindowViolations.
func (d *driver) checkResetWindow(hs []hist) {
	dc := d.converter()
	for _, x := range hs {
		if !guarded(x, dc) {
			continue
		}
		checked, violations := resetWindowViolations(x, dc)
		d.r.windowed += checked
		for _, v := range violations {
			d.r.fail("reset-window", "%s", v)
		}
	}
}

// resetWindowViolations lists the halts of history x that came within one
// window after a reset of their own loop: a halt by a repetition reader,
// of loop L (HaltEvent.Loop), with fewer than minWindowCalls guarded calls
// (activities scheduled, local activities recorded, children initiated, of
// any node) between the latest reset of L and the halt's loop.halted echo.
//
// The resets it sees, each placed no later than it happened, so that the
// calls it counts are never fewer than the calls the loop made since:
//
//   - a halt of L that was resumed (by a human, the pause timeout or the
//     halt handler: a later memo says running): from the memo that showed
//     the halt, which the guard writes before it waits or asks the handler;
//   - a warning of L (Warning.Loop): from just after the last call of the
//     warning's nodes (Warning.Nodes) before the first call whose notice
//     carries it: those nodes' calls carry it from the reset on, so that
//     call came before the reset, or is the one that tripped; a local
//     activity, which shows no header in the history, may come between
//     and is counted.
//
// A reset it does not see (an escalated halt's, a warning under the codec,
// a reset in an earlier run) only makes it count from an earlier point:
// more calls, never a false failure. Counting calls of every node, not only
// the loop's, errs the same way.
//
// It returns how many halts it checked against a reset, and the violations.
func resetWindowViolations(x hist, dc converter.DataConverter) (int, []string) {
	evs := x.h.GetEvents()
	halts := map[int]protocol.HaltEvent{} // own halts by seq
	echoAt := map[int]int{}               // seq → index of its echo
	for i, e := range evs {
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a == nil || a.GetSignalName() != protocol.DefaultHaltedSignal || len(a.GetInput().GetPayloads()) == 0 {
			continue
		}
		var ev protocol.HaltEvent
		if dc.FromPayload(a.GetInput().GetPayloads()[0], &ev) != nil || !ownEcho(x.h, ev) {
			continue
		}
		if _, seen := halts[ev.Seq]; !seen {
			halts[ev.Seq], echoAt[ev.Seq] = ev, i
		}
	}
	// calls[i] counts the guarded calls among evs[:i].
	calls := make([]int, len(evs)+1)
	for i, e := range evs {
		calls[i+1] = calls[i]
		if isCall(e) {
			calls[i+1]++
		}
	}
	type reset struct {
		loop, what string
		seq        int // the resumed halt's, 0 for a warning
		at         int // index of the first event after the reset
		// seen is the index of the first event that shows it: the memo
		// that showed the resumed halt, the first call carrying the warning.
		seen int
	}
	var resets []reset
	// Resumed halts: the memo showing halt seq, then a memo saying running.
	// raisedAt: the memo that first showed each halt, which the guard
	// writes when it raises it; its loop.halted echo comes later, after
	// the task's commands, and a warning first seen on a call after the
	// halt was raised (a resumed loop's call) is not a reset before it.
	raisedAt := map[int]int{}
	shownAt, open := -1, 0
	canceled := false // the workflow's cancellation was requested during the pause
	for i, e := range evs {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED {
			canceled = open > 0
			continue
		}
		m, ok := guardMemo(e, dc)
		if !ok {
			continue
		}
		if _, seen := raisedAt[m.Seq]; m.Seq > 0 && !seen && (m.State == string(protocol.StateHalted) || m.State == string(protocol.StateEscalated)) {
			raisedAt[m.Seq] = i
		}
		switch {
		case m.State == string(protocol.StateHalted):
			if m.Seq != open { // a memo written again for the same halt is not the halt
				shownAt, open, canceled = i, m.Seq, false
			}
		case m.State == string(protocol.StateRunning) && open > 0:
			// A cancellation ends the pause without starting the loop over.
			if ev, ok := halts[open]; ok && ev.Loop != "" && !canceled {
				resets = append(resets, reset{loop: ev.Loop, what: fmt.Sprintf("halt %d resumed", open), seq: open, at: shownAt, seen: shownAt})
			}
			open = 0
		default:
			open = 0
		}
	}
	// Warnings: the first call carrying each warning of a loop.
	last := map[string]int{} // loop → N of the warning its calls last carried
	for _, n := range headerNotices(x) {
		w := n.notice.Warning
		if w == nil || w.Loop == "" || last[w.Loop] == w.N {
			continue
		}
		last[w.Loop] = w.N
		at := 0
		for j := n.event - 1; j >= 0; j-- {
			if slices.Contains(w.Nodes, headerCallNode(evs[j])) {
				at = j + 1
				break
			}
		}
		resets = append(resets, reset{loop: w.Loop, what: fmt.Sprintf("warning %d/%d (%s at %s)", w.N, w.Of, w.Detector, w.Node), at: at, seen: n.event})
	}
	var out []string
	checked := 0
	for _, seq := range slices.Sorted(maps.Keys(halts)) {
		ev := halts[seq]
		if ev.Loop == "" || !repetitionReaders[ev.Detector] {
			continue
		}
		end := echoAt[seq]
		bound := end
		if r, ok := raisedAt[seq]; ok && r < bound {
			bound = r
		}
		var latest *reset
		for k := range resets {
			r := &resets[k]
			// A reset first seen after the halt was raised (a warning a call
			// released after the halt carried) is not one before it.
			if r.loop == ev.Loop && r.seq < seq && r.at <= bound && r.seen < bound && (latest == nil || r.at > latest.at) {
				latest = r
			}
		}
		if latest == nil {
			continue
		}
		checked++
		if c := calls[end] - calls[latest.at]; c < minWindowCalls {
			out = append(out, fmt.Sprintf("%s: halt %d (%s at %s, loop %s, echo event %d) came %d call(s) after %s (event %d): a loop that starts over needs at least %d calls to trip a repetition reader again",
				x.name, seq, ev.Detector, ev.Node, ev.Loop, end+1, c, latest.what, latest.at+1, minWindowCalls))
		}
	}
	return checked, out
}

// memoState is the part of the guard's memo the checks read: the state it
// shows and the seq of the halt it names.
type memoState struct {
	State string `json:"state"`
	Seq   int    `json:"seq"`
}

// guardMemo reads the guard's memo from e, if e upserts it.
func guardMemo(e *historypb.HistoryEvent, dc converter.DataConverter) (memoState, bool) {
	p := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()["loopguard"]
	var m memoState
	if p == nil || dc.FromPayload(p, &m) != nil {
		return memoState{}, false
	}
	return m, true
}

// isCall reports whether e records a guarded call: an activity scheduled,
// a local activity's marker, a child workflow initiated.
func isCall(e *historypb.HistoryEvent) bool {
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
		return true
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		return e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity"
	}
	return false
}

// headerCallNode is the node of an activity scheduled or a child workflow
// initiated (the calls whose header the history shows), or "".
func headerCallNode(e *historypb.HistoryEvent) string {
	if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
		return a.GetActivityType().GetName()
	}
	return e.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetWorkflowType().GetName()
}
