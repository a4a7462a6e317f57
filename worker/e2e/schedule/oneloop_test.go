package schedule_test

import (
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// checkOneLoop checks the one-loop invariants on every history of a run:
//
//   - warnings-spent: no loop gets more warnings than Options.Warnings: a
//     warning a call's notice header carries is n of Warnings with
//     1 ≤ n ≤ Warnings, and a halt lists at most Warnings of them;
//   - halt-published: every halt the execution raised that paused (not
//     observed) is visible outside the workflow within the workflow task
//     that raised it: the memo shows it (its seq, halted or escalated)
//     before its loop.halted echo, which the server appends after the
//     commands of the task that sent it. (At version 8 a halt the halt
//     handler decided was never shown, and one it handed over was shown
//     only once the handler had run.)
func (d *driver) checkOneLoop(hs []hist) {
	warnings := d.p.Options().Warnings
	dc := d.converter()
	for _, x := range hs {
		for _, n := range headerNotices(x) {
			if w := n.notice.Warning; w != nil && (w.N < 1 || w.N > warnings || w.Of != warnings) {
				d.r.fail("warnings-spent", "%s carried warning %d/%d, Options.Warnings is %d", n.where, w.N, w.Of, warnings)
			}
		}
		if !guarded(x, dc) {
			continue
		}
		shown := map[int]bool{} // halt seqs the memo has shown halted or escalated
		for i, e := range x.h.GetEvents() {
			if p := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()["loopguard"]; p != nil {
				var m struct {
					State string `json:"state"`
					Seq   int    `json:"seq"`
				}
				if dc.FromPayload(p, &m) == nil && (m.State == "halted" || m.State == "escalated") {
					shown[m.Seq] = true
				}
				continue
			}
			a := e.GetWorkflowExecutionSignaledEventAttributes()
			if e.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED || a.GetSignalName() != protocol.DefaultHaltedSignal {
				continue
			}
			var ev protocol.HaltEvent
			if dc.FromPayload(a.GetInput().GetPayloads()[0], &ev) != nil || ev.Observed || !ownEcho(x.h, ev) {
				continue
			}
			if len(ev.Warnings) > warnings {
				d.r.fail("warnings-spent", "%s: halt %d lists %d warnings, Options.Warnings is %d", x.name, ev.Seq, len(ev.Warnings), warnings)
			}
			if !shown[ev.Seq] {
				d.r.fail("halt-published", "%s: halt %d (%s at %s) was not in the memo before its loop.halted echo (event %d)", x.name, ev.Seq, ev.Detector, ev.Node, i+1)
			}
		}
	}
}

// ownEcho reports whether ev is the halt of the execution whose history h
// is (not a halt another workflow reported).
func ownEcho(h *historypb.History, ev protocol.HaltEvent) bool {
	evs := h.GetEvents()
	if len(evs) == 0 {
		return false
	}
	a := evs[0].GetWorkflowExecutionStartedEventAttributes()
	return ev.RunID == a.GetOriginalExecutionRunId()
}

// converter is the data converter the plan's workers and clients use: the
// codec's for a codec plan. Every payload the guard writes with the
// workflow's converter (the version marker, the memo, loop.halted) is read
// with it; a check that read a codec history with the default converter
// would see no guard at all and check nothing.
func (d *driver) converter() converter.DataConverter {
	if d.p.Codec {
		return schedule.DataConverter()
	}
	return converter.GetDefaultDataConverter()
}
