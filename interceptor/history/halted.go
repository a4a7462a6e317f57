package history

import (
	"math"
	"time"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/blocks"
)

// Under Options.Follow a halt is handed over in full once, then kept for
// what the run still needs of it (which halts wait for a pause, the halt
// an unpause resumes) and for what a watcher lists (call, seq, detector,
// node). Its evidence, message and warnings are dropped, and its strings
// are the run's few names (nodes, loops, cycles, detectors, reasons,
// ids) repeated halt after halt: each is kept once in the run's name
// table and a halt holds its indices. A kept halt is 40 bytes.

// keptHalt is a handed halt as Options.Follow keeps it. Its workflow
// id, run id and type are the Halted's own (ids).
type keptHalt struct {
	at                             int64 // WorkflowTime, Unix ns (0: the zero time)
	call, seq, iteration, limit    int32
	reason, detector, onHalt, node uint16 // in names
	cycle, loop, period            uint16 // cycle, loop in names
	observed                       bool
}

// haltIDs are the workflow id, run id and type a halt names.
type haltIDs struct{ workflowID, runID, workflowType string }

// wideHalt, in keptHalt.reason, marks a halt whose numbers or names do
// not fit: its call is an index in Halted.wide, which holds it stripped.
const wideHalt = noName

// Halted are the halts of a run followed under Options.Follow handed over
// so far, kept compact; At expands one. A Halted is a view: the Reader
// only appends to what it views, so a Halted taken from an Execution may
// be read from another goroutine while the Reader reads on.
type Halted struct {
	halts blocks.List[keptHalt]
	ids   haltIDs // of every halt of halts
	names []string
	wide  []interceptor.Verdict
	// decided are the decisions handed over with their halts, found by
	// seq, but for the resumes of unpauses: pauses are the run's pauses,
	// which keep those (Pause.Resumed).
	decided []protocol.Decision
	pauses  Pauses
}

// Len is the number of halts.
func (h Halted) Len() int { return h.halts.Len() }

// At is halt i (from 0, in order) as a verdict without its evidence,
// message and warnings (Halt set), with the decision noted on it.
func (h Halted) At(i int) interceptor.Verdict {
	v := h.stripped(i)
	if d, ok := h.pauses.resumed(v.Halt.Seq); ok {
		v.Decision = &d
	}
	for j := range h.decided {
		if d := h.decided[j]; d.HaltSeq == v.Halt.Seq {
			v.Decision = &d
		}
	}
	return v
}

func (h Halted) stripped(i int) interceptor.Verdict {
	k := h.halts.At(i)
	if k.reason == wideHalt {
		return h.wide[k.call]
	}
	ev := &protocol.HaltEvent{
		CycleID: h.names[k.cycle], HaltReason: detect.Reason(h.names[k.reason]),
		Detector: detect.Detector(h.names[k.detector]), Node: h.names[k.node],
		Iteration: int(k.iteration), MaxIterations: int(k.limit),
		WorkflowID: h.ids.workflowID, RunID: h.ids.runID, WorkflowType: h.ids.workflowType,
		Seq: int(k.seq), Observed: k.observed, Loop: h.names[k.loop],
	}
	if k.at != 0 {
		ev.WorkflowTime = time.Unix(0, k.at).UTC()
	}
	return interceptor.Verdict{Call: int(k.call), Halt: ev, Period: int(k.period), OnHalt: protocol.OnHalt(h.names[k.onHalt])}
}

// Seq is halt i's seq, Call its call, without expanding it.
func (h Halted) Seq(i int) int {
	if k := h.halts.At(i); k.reason != wideHalt {
		return int(k.seq)
	}
	return h.stripped(i).Halt.Seq
}

// Call is halt i's call.
func (h Halted) Call(i int) int {
	if k := h.halts.At(i); k.reason != wideHalt {
		return int(k.call)
	}
	return h.stripped(i).Call
}

// observed reports whether halt i is one the options observe (no pause
// answers it).
func (h Halted) observed(i int) bool {
	if k := h.halts.At(i); k.reason != wideHalt {
		return protocol.OnHalt(h.names[k.onHalt]) == protocol.OnHaltObserve
	}
	return h.stripped(i).OnHalt == protocol.OnHaltObserve
}

// verdicts are every halt expanded, with room for n more verdicts.
func (h Halted) verdicts(n int) []interceptor.Verdict {
	out := make([]interceptor.Verdict, h.Len(), h.Len()+n)
	for i := range out {
		out[i] = h.At(i)
	}
	return out
}

// haltKeeper appends handed halts to a Halted, interning their names in
// tab (the run's, shared with its pauses; its own when nil).
type haltKeeper struct {
	Halted
	tab *names
}

// keep appends v's halt, stripped, and the decision noted on it.
func (k *haltKeeper) keep(v interceptor.Verdict) {
	if v.Decision != nil {
		k.decided = append(k.decided, *v.Decision)
	}
	ev := v.Halt
	var t int64
	if !ev.WorkflowTime.IsZero() {
		t = ev.WorkflowTime.UnixNano()
	}
	h := keptHalt{at: t, observed: ev.Observed}
	// A time UnixNano cannot hold (before 1678, after 2262) or the epoch
	// itself (0 is the zero time here) is kept wide.
	fits := ev.WorkflowTime.IsZero() || t != 0 && time.Unix(0, t).Equal(ev.WorkflowTime)
	for _, n := range []struct {
		to *int32
		v  int
	}{{&h.call, v.Call}, {&h.seq, ev.Seq}, {&h.iteration, ev.Iteration}, {&h.limit, ev.MaxIterations}} {
		if n.v < math.MinInt32 || n.v > math.MaxInt32 {
			fits = false
		}
		*n.to = int32(n.v)
	}
	if v.Period < 0 || v.Period > math.MaxUint16 {
		fits = false
	}
	h.period = uint16(v.Period)
	for _, n := range []struct {
		to *uint16
		s  string
	}{{&h.reason, string(ev.HaltReason)}, {&h.detector, string(ev.Detector)}, {&h.onHalt, string(v.OnHalt)},
		{&h.node, ev.Node}, {&h.cycle, ev.CycleID}, {&h.loop, ev.Loop}} {
		i, ok := k.intern(n.s)
		fits = fits && ok
		*n.to = i
	}
	// A run's halts name the run; one that names another is kept wide.
	ids := haltIDs{ev.WorkflowID, ev.RunID, ev.WorkflowType}
	if k.halts.Len() == 0 {
		k.ids = ids
	}
	fits = fits && ids == k.ids
	if !fits {
		s := *ev
		s.Evidence, s.Warnings, s.SuggestedActions, s.Message = protocol.Evidence{}, nil, nil, ""
		v.Halt, v.Evidence, v.Warning, v.Decision = &s, nil, nil, nil
		h = keptHalt{reason: wideHalt, call: int32(len(k.wide))}
		k.wide = append(k.wide, v)
	}
	k.halts.Add(h)
}

// intern is s's index in the names the Halted reads, added if new;
// false when the table is full.
func (k *haltKeeper) intern(s string) (uint16, bool) {
	if k.tab == nil {
		k.tab = &names{}
	}
	i, ok := k.tab.intern(s)
	k.names = k.tab.list
	return i, ok
}

// HaltedOf keeps the halts of verdicts as a Reader under Options.Follow
// keeps those it handed over (for a follower's tests).
func HaltedOf(verdicts ...interceptor.Verdict) Halted {
	var k haltKeeper
	for _, v := range verdicts {
		if v.Halt != nil {
			k.keep(v)
		}
	}
	return k.Halted
}
