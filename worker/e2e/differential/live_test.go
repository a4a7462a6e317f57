package differential_test

import (
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/worker/e2e/differential"
)

// haltedActivity is the local activity through which the guard raises
// loop.halted: its marker stands where the halt met its call.
const haltedActivity = "raiseHaltedSignal"

// liveLines reads what the guard did from the chain's histories, calls
// counted over the chain: a warning first shows in the notice of the call
// it was issued at (an activity's or child's header; what a local activity
// read, noted by differential.Agent), or, issued at the call a halt then
// met, among the halt event's warnings; a halt's loop.halted local activity
// runs before the call it met, and its event is the loop.halted signal
// echoed with its seq (after a reset, the reset run's own echo comes after
// the base's reapplied one); its decision is what loop.status showed.
func liveLines(d *driver, chain []*historypb.History, phase int) ([]string, error) {
	dc := converter.GetDefaultDataConverter()
	var out []string
	calls := 0
	for _, h := range chain {
		echoes := map[int]interceptor.HaltEvent{}
		var order []int
		for _, e := range h.GetEvents() {
			if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == interceptor.DefaultHaltedSignal {
				var ev interceptor.HaltEvent
				if err := dc.FromPayloads(a.GetInput(), &ev); err != nil {
					return nil, fmt.Errorf("loop.halted at event %d: %w", e.GetEventId(), err)
				}
				if _, ok := echoes[ev.Seq]; !ok {
					order = append(order, ev.Seq)
				}
				echoes[ev.Seq] = ev
			}
		}
		slices.Sort(order)
		seen := map[string]bool{}
		warned := func(w *interceptor.Warning) {
			if w == nil {
				return
			}
			if k := fmt.Sprintf("%d/%d %s/%s@%s", w.N, w.Of, w.Reason, w.Detector, w.Node); !seen[k] {
				seen[k] = true
				out = append(out, verdictLine(calls, w, nil, nil))
			}
		}
		header := func(p map[string]*commonpb.Payload) *interceptor.Warning {
			var n interceptor.Notice
			if x := p[interceptor.NoticeHeader]; x == nil || dc.FromPayload(x, &n) != nil {
				return nil
			}
			return n.Warning
		}
		halts := 0
		// A local activity ran in the run whose started event the history
		// holds (a reset keeps its base's), or in the reset run.
		runID := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId()
		for _, e := range h.GetEvents() {
			switch {
			case e.GetActivityTaskScheduledEventAttributes() != nil:
				a := e.GetActivityTaskScheduledEventAttributes()
				if !slices.Contains(differential.ActivityNodes, a.GetActivityType().GetName()) {
					continue
				}
				calls++
				warned(header(a.GetHeader().GetFields()))
			case e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
				a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
				calls++
				warned(header(a.GetHeader().GetFields()))
			case e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity":
				var data struct{ ActivityID, ActivityType string }
				if err := dc.FromPayloads(e.GetMarkerRecordedEventAttributes().GetDetails()["data"], &data); err != nil {
					return nil, fmt.Errorf("local activity marker at event %d: %w", e.GetEventId(), err)
				}
				switch {
				case data.ActivityType == haltedActivity:
					if halts >= len(order) {
						return nil, fmt.Errorf("halt %d raised at event %d has no loop.halted", halts+1, e.GetEventId())
					}
					ev := echoes[order[halts]]
					halts++
					dec, ok := d.decisions[phase][ev.Seq]
					if !ok {
						dec, ok = d.decisions[0][ev.Seq]
					}
					var decp *interceptor.Decision
					if ok {
						decp = &dec
					}
					// A warning given at the call the halt then met shows
					// in no notice (the call goes on, after the halt, with
					// its guidance): the halt's event lists it among the
					// warnings the loop got.
					for i := range ev.Warnings {
						calls++
						warned(&ev.Warnings[i])
						calls--
					}
					out = append(out, verdictLine(calls+1, nil, &ev, decp))
					clear(seen) // the halt answered the warnings in force
				case slices.Contains(differential.LocalNodes, data.ActivityType):
					calls++
					w, ok := differential.Notices.Load(runID + "/" + data.ActivityID)
					if !ok {
						w, ok = differential.Notices.Load(d.resetRun + "/" + data.ActivityID)
					}
					if ok {
						warning := w.(interceptor.Warning)
						warned(&warning)
					}
				}
			}
		}
	}
	return out, nil
}
