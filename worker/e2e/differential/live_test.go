package differential_test

import (
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/differential"
)

// haltedActivity is the local activity through which the guard raises
// loop.halted: its marker stands where the halt met its call.
const haltedActivity = "raiseHaltedSignal"

// memoKey is the memo entry the guard publishes its state in
// (Options.MemoKey's default).
const memoKey = "loopguard"

// memoWarning is what the guard's memo says of a warning in force.
type memoWarning struct {
	N      int                 `json:"n"`
	Of     int                 `json:"of"`
	Reason protocol.HaltReason `json:"reason"`
	Node   string              `json:"node"`
}

func (w memoWarning) key() string { return fmt.Sprintf("%d/%d %s@%s", w.N, w.Of, w.Reason, w.Node) }

// liveLines reads what the guard did from the chain's histories, calls
// counted over the chain. A warning stands at the call whose admission
// issued it, which is where the guard's memo first lists it (the memo is
// upserted before the call's command), or, when the same admission
// halted, where the halt that lists it met its call: the call the warning
// was issued at may not carry it (a warning for another node of the loop,
// or a call the halt held, which the halt answered), so a notice header is
// not where it shows first. Its detector, which the memo leaves out, is
// read from a notice or a halt that carries it. A halt's loop.halted
// local activity runs before the call it met, and its event is the
// loop.halted signal echoed with its seq (after a reset, the reset run's
// own echo comes after the base's reapplied one); its decision is what
// loop.status showed.
func liveLines(d *driver, chain []*historypb.History, phase int) ([]string, error) {
	dc := converter.GetDefaultDataConverter()
	detectors, err := warningDetectors(d, chain)
	if err != nil {
		return nil, err
	}
	var out []string
	calls := 0
	inForce := map[string]bool{} // the warnings of the last memo, and of the halt since
	warned := func(w memoWarning) {
		if !inForce[w.key()] {
			inForce[w.key()] = true
			out = append(out, verdictLine(calls+1, &protocol.Warning{N: w.N, Of: w.Of, Reason: w.Reason, Node: w.Node, Detector: detectors[w.key()]}, nil, nil))
		}
	}
	ids := runIDs(chain)
	recordedRuns := false // the guard's own account of its warnings (recorder_test.go)
	for _, id := range ids {
		if _, ok := account(id); ok {
			recordedRuns = true
		}
	}
	for i, h := range chain {
		echoes, order, err := haltEchoes(h)
		if err != nil {
			return nil, err
		}
		halts := 0
		offset, runHalts := calls, []string(nil)
		if recordedRuns {
			warned = func(memoWarning) {}
		}
		for _, e := range h.GetEvents() {
			switch {
			case e.GetActivityTaskScheduledEventAttributes() != nil:
				if slices.Contains(differential.ActivityNodes, e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()) {
					calls++
				}
			case e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
				calls++
			case e.GetWorkflowPropertiesModifiedEventAttributes() != nil:
				p := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[memoKey]
				if p == nil {
					continue
				}
				var memo struct{ Warnings []memoWarning }
				if err := dc.FromPayload(p, &memo); err != nil {
					return nil, fmt.Errorf("memo at event %d: %w", e.GetEventId(), err)
				}
				for _, w := range memo.Warnings {
					warned(w)
				}
				clear(inForce)
				for _, w := range memo.Warnings {
					inForce[w.key()] = true
				}
			case e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity":
				data, err := localActivity(e)
				if err != nil {
					return nil, err
				}
				switch {
				case data.ActivityType == haltedActivity && e.GetMarkerRecordedEventAttributes().GetFailure() != nil:
					// The guard could not send loop.halted (its local
					// activity failed: seeds 100199, 203985, 206016, the
					// signal not sent within HaltSignalTimeout, each in
					// the task after one that failed UnhandledCommand); it
					// logged it and went on. The halt has no echo to read
					// it from.
					return nil, &unechoedError{event: e.GetEventId(), msg: e.GetMarkerRecordedEventAttributes().GetFailure().GetMessage()}
				case data.ActivityType == haltedActivity:
					if halts >= len(order) {
						return nil, fmt.Errorf("halt %d raised at event %d has no loop.halted", halts+1, e.GetEventId())
					}
					ev := echoes[order[halts]]
					halts++
					// Warned at the admission that halted: the halt's
					// memo, which lists it, comes after its marker.
					for _, w := range ev.Warnings {
						warned(memoWarning{N: w.N, Of: w.Of, Reason: w.Reason, Node: w.Node})
					}
					dec, ok := d.decisions[phase][ev.Seq]
					if !ok {
						dec, ok = d.decisions[0][ev.Seq]
					}
					var decp *protocol.Decision
					if ok {
						decp = &dec
					}
					if recordedRuns {
						runHalts = append(runHalts, verdictLine(calls+1, nil, &ev, decp))
					} else {
						out = append(out, verdictLine(calls+1, nil, &ev, decp))
					}
				case slices.Contains(differential.LocalNodes, data.ActivityType):
					calls++
				}
			}
		}
		if recordedRuns {
			lines, _ := account(ids[i])
			out = append(out, merge(lines, offset, runHalts)...)
		}
	}
	return out, nil
}

// haltEchoes reads h's loop.halted signals by seq, and their seqs in
// order.
func haltEchoes(h *historypb.History) (map[int]protocol.HaltEvent, []int, error) {
	dc := converter.GetDefaultDataConverter()
	echoes := map[int]protocol.HaltEvent{}
	var order []int
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == protocol.DefaultHaltedSignal {
			var ev protocol.HaltEvent
			if err := dc.FromPayloads(a.GetInput(), &ev); err != nil {
				return nil, nil, fmt.Errorf("loop.halted at event %d: %w", e.GetEventId(), err)
			}
			if _, ok := echoes[ev.Seq]; !ok {
				order = append(order, ev.Seq)
			}
			echoes[ev.Seq] = ev
		}
	}
	slices.Sort(order)
	return echoes, order, nil
}

// localActivity reads a local activity's marker.
func localActivity(e *historypb.HistoryEvent) (data struct{ ActivityID, ActivityType string }, err error) {
	err = converter.GetDefaultDataConverter().FromPayloads(e.GetMarkerRecordedEventAttributes().GetDetails()["data"], &data)
	if err != nil {
		err = fmt.Errorf("local activity marker at event %d: %w", e.GetEventId(), err)
	}
	return data, err
}

// warningDetectors names the detector of each warning the chain's notices
// and halts carry, by its memo key.
func warningDetectors(d *driver, chain []*historypb.History) (map[string]detect.Detector, error) {
	dc := converter.GetDefaultDataConverter()
	out := map[string]detect.Detector{}
	note := func(w *protocol.Warning) {
		if w != nil {
			out[memoWarning{N: w.N, Of: w.Of, Reason: w.Reason, Node: w.Node}.key()] = w.Detector
		}
	}
	header := func(p map[string]*commonpb.Payload) {
		var n protocol.Notice
		if x := p[protocol.NoticeHeader]; x != nil && dc.FromPayload(x, &n) == nil {
			note(n.Warning)
		}
	}
	for _, h := range chain {
		// A local activity ran in the run whose started event the history
		// holds (a reset keeps its base's), or in the reset run.
		runID := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId()
		for _, e := range h.GetEvents() {
			switch {
			case e.GetActivityTaskScheduledEventAttributes() != nil:
				header(e.GetActivityTaskScheduledEventAttributes().GetHeader().GetFields())
			case e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
				header(e.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetHeader().GetFields())
			case e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity":
				data, err := localActivity(e)
				if err != nil {
					return nil, err
				}
				w, ok := differential.Notices.Load(runID + "/" + data.ActivityID)
				if !ok {
					w, ok = differential.Notices.Load(d.resetRun + "/" + data.ActivityID)
				}
				if ok {
					warning := w.(protocol.Warning)
					note(&warning)
				}
			}
		}
		echoes, order, err := haltEchoes(h)
		if err != nil {
			return nil, err
		}
		for _, seq := range order {
			for _, w := range echoes[seq].Warnings {
				note(&w)
			}
		}
	}
	return out, nil
}

// unechoedError is a live halt whose loop.halted the guard could not
// send: the test reads live halts from their echo, so the shape is not
// judged.
type unechoedError struct {
	event int64
	msg   string
}

func (e *unechoedError) Error() string {
	return fmt.Sprintf("the guard's loop.halted local activity failed at event %d: %s", e.event, e.msg)
}
