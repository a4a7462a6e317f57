package detect

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// snapshotVersion numbers the snapshot encoding.
const snapshotVersion = 1

// The compact JSON form of a State, for continue-as-new. Hashes are 16-hex
// strings (safe through any JSON layer), times Unix nanoseconds, lists
// oldest first.
type snapshot struct {
	V          int         `json:"v"`
	Nodes      []snapNode  `json:"n,omitempty"`
	Edges      [][4]int    `json:"e,omitempty"` // from, to, count, declared
	Cycles     []snapCycle `json:"c,omitempty"`
	Seq        int         `json:"q,omitempty"`
	TotalCalls int         `json:"tc,omitempty"`
	TotalSteps int         `json:"ts,omitempty"`
	TotalCost  float64     `json:"t$,omitempty"`
	Last       int         `json:"l"`
	Trans      [][4]int    `json:"tr,omitempty"` // from, to, seq, progress
	TimerSeq   int         `json:"tm,omitempty"`
	Cand       *[2]int     `json:"cd,omitempty"` // candidate node, its step
	Pending    *Trip       `json:"p,omitempty"`
	Stop       *Trip       `json:"st,omitempty"` // a stop queued behind Pending
	Ext        *Extension  `json:"x,omitempty"`
	Steps      string      `json:"sq,omitempty"` // the step sequence (sequence_snapshot.go)
}

type snapNode struct {
	Name     string     `json:"n"`
	Declared bool       `json:"d,omitempty"`
	Seen     int        `json:"sn,omitempty"`
	Calls    int        `json:"c,omitempty"`
	Steps    int        `json:"s,omitempty"`
	Run      int64      `json:"r,omitempty"`
	Cost     float64    `json:"$,omitempty"`
	FirstSeq int        `json:"fs,omitempty"`
	FirstAt  int64      `json:"fa,omitempty"`
	OpenSeq  int        `json:"os,omitempty"`
	OpenAt   int64      `json:"oa,omitempty"`
	InFlight int        `json:"if,omitempty"`
	Agg      *snapAgg   `json:"ag,omitempty"`
	Hist     []snapRec  `json:"h,omitempty"`
	LastProg string     `json:"lp,omitempty"`
	Best     *float64   `json:"b,omitempty"`
	NoImp    int        `json:"ni,omitempty"`
	ExtCalls int        `json:"xc,omitempty"`
	ExtRun   int64      `json:"xr,omitempty"`
	ExtEdge  int        `json:"xe,omitempty"`
	NovelSeq int        `json:"nv,omitempty"`
	Varied   bool       `json:"va,omitempty"`
	Waited   bool       `json:"ow,omitempty"`
	Learn    *snapLearn `json:"lr,omitempty"`
}

// snapLearn is a node's learning state: fields as "path:sum" hex pairs,
// with ":value" when the reader read a value.
type snapLearn struct {
	Prev  []string `json:"p,omitempty"`
	Chg   []uint8  `json:"c,omitempty"`
	Vol   []uint32 `json:"v,omitempty"`
	Pend  []string `json:"pd,omitempty"` // the open step's fields
	Basis [3]uint8 `json:"b"`            // the basis; the other two bytes are 0 (no rule reads what they held)
	Dir   []int8   `json:"d,omitempty"`  // direction of each prev field's last change
	Turns []uint8  `json:"t,omitempty"`  // turns among its consecutive changes
	// 1 when each prev field's last change was a clock's.
	Clk []uint8 `json:"k,omitempty"`
}

type snapAgg struct {
	Ended     int     `json:"n,omitempty"`
	OK        bool    `json:"ok,omitempty"`
	Out       string  `json:"o,omitempty"`
	ErrSig    string  `json:"e,omitempty"`
	HasProg   bool    `json:"hp,omitempty"`
	Prog      string  `json:"p,omitempty"`
	ProgRaw   string  `json:"r,omitempty"`
	HasMetric bool    `json:"hm,omitempty"`
	Metric    float64 `json:"m,omitempty"`
	Cost      float64 `json:"$,omitempty"`
	Shape     string  `json:"sh,omitempty"`
	Count     int64   `json:"ct,omitempty"`
	Action    string  `json:"ac,omitempty"`
	Fanout    bool    `json:"fo,omitempty"`
	ErrHash   string  `json:"eh,omitempty"`
}

type snapRec struct {
	Out     string  `json:"o,omitempty"`
	Prog    string  `json:"p,omitempty"`
	Metric  float64 `json:"m,omitempty"`
	ErrSig  string  `json:"e,omitempty"`
	ProgRaw string  `json:"r,omitempty"`
	Flags   uint8   `json:"f,omitempty"`
	Seq     int     `json:"q,omitempty"`
	Shape   string  `json:"sh,omitempty"`
	Count   int64   `json:"ct,omitempty"`
	Action  string  `json:"ac,omitempty"`
	Key     string  `json:"k,omitempty"`
}

type snapCycle struct {
	ID       string  `json:"id"`
	Members  []int32 `json:"m"`
	Anchor   int     `json:"a"`
	Iter     int     `json:"i"`
	Start    int64   `json:"s,omitempty"`
	HasStart bool    `json:"hs,omitempty"`
	Restart  bool    `json:"rs,omitempty"`
	Cost     float64 `json:"$,omitempty"`
	ExtIter  int     `json:"xi,omitempty"`
	ExtRun   int64   `json:"xr,omitempty"`
	ExtCost  float64 `json:"x$,omitempty"`
}

// MarshalJSON encodes the state compactly, for continue-as-new: Restore
// continues it exactly (counters, histories, cycles, pending trip).
func (s *State) MarshalJSON() ([]byte, error) {
	return json.Marshal(s.snapshot())
}

// Size is the approximate size of the state in bytes: the length of its
// JSON snapshot. It is bounded by the policy (Window, MaxNodes, the declared
// graph), not by the number of calls.
func (s *State) Size() int {
	b, err := s.MarshalJSON()
	if err != nil {
		return 0
	}
	return len(b)
}

func (s *State) snapshot() snapshot {
	sn := snapshot{
		V:          snapshotVersion,
		Seq:        s.seq,
		TotalCalls: s.totalCalls,
		TotalSteps: s.totalSteps,
		TotalCost:  s.totalCost,
		Last:       s.last,
		TimerSeq:   seqAgo(s.seq, s.timerSeq),
		Pending:    s.pending,
		Stop:       s.stop,
	}
	if s.cand >= 0 {
		sn.Cand = &[2]int{s.cand, seqAgo(s.seq, s.candSeq)}
	}
	if s.ext != (Extension{}) {
		x := s.ext
		sn.Ext = &x
	}
	for i := range s.nodes {
		sn.Nodes = append(sn.Nodes, snapNodeOf(&s.nodes[i], s.seq))
	}
	for _, e := range s.edges {
		d := 0
		if e.declared {
			d = 1
		}
		sn.Edges = append(sn.Edges, [4]int{int(e.from), int(e.to), e.count, d})
	}
	for _, c := range s.cycles {
		sn.Cycles = append(sn.Cycles, snapCycle{
			ID: c.id, Members: c.members, Anchor: c.anchor, Iter: c.iter,
			Start: unixNano(c.start), HasStart: c.hasStart, Restart: c.restart, Cost: c.cost,
			ExtIter: c.ext.MaxCycleIterations, ExtRun: int64(c.ext.MaxCycleRuntime), ExtCost: c.ext.MaxCycleCost,
		})
	}
	for k := s.trans.n - 1; k >= 0; k-- {
		t := s.trans.at(k)
		sn.Trans = append(sn.Trans, [4]int{int(t.from), int(t.to), t.seq, int(t.prog)})
	}
	sn.Steps = s.encodeSteps()
	return sn
}

func snapNodeOf(n *node, seq int) snapNode {
	sn := snapNode{
		Name: n.name, Declared: n.declared, Seen: n.seen, Calls: n.calls, Steps: n.steps,
		Run: int64(n.run), Cost: n.cost, FirstSeq: n.firstSeq, FirstAt: unixNano(n.firstAt),
		OpenSeq: n.openSeq, OpenAt: unixNano(n.openAt), InFlight: n.inflight,
		NovelSeq: seqAgo(seq, n.novelSeq), Varied: n.varied, Waited: n.openWaited,
		NoImp: n.noImprove, ExtCalls: n.ext.MaxCallsPerNode, ExtRun: int64(n.ext.MaxNodeRuntime), ExtEdge: n.ext.MaxEdgeWithoutProgress,
	}
	if n.agg != (agg{}) {
		a := n.agg
		sn.Agg = &snapAgg{
			Ended: a.ended, OK: a.ok, Out: hexOrEmpty(a.out), ErrSig: a.errSig,
			HasProg: a.hasProg, Prog: hexOrEmpty(a.prog), ProgRaw: a.progRaw,
			HasMetric: a.hasMetric, Metric: a.metric, Cost: a.cost,
			Shape: hexOrEmpty(a.shape), Count: a.count, Action: hexOrEmpty(a.action), Fanout: a.fanout,
			ErrHash: hexOrEmpty(a.errHash),
		}
	}
	if l := &n.learn; l.nprev > 0 || l.nvol > 0 || l.npend > 0 || l.basis != basisNone {
		sl := &snapLearn{
			Chg: append([]uint8(nil), l.chg[:l.nprev]...), Vol: append([]uint32(nil), l.vol[:l.nvol]...),
			Prev: fieldStrings(l.prev[:l.nprev]), Pend: fieldStrings(l.pend[:l.npend]),
			Basis: [3]uint8{uint8(l.basis)},
		}
		if hasNonZero(l.dir[:l.nprev]) || hasNonZero(l.turns[:l.nprev]) {
			sl.Dir = append([]int8(nil), l.dir[:l.nprev]...)
			sl.Turns = append([]uint8(nil), l.turns[:l.nprev]...)
		}
		if hasNonZero(l.clk[:l.nprev]) {
			sl.Clk = append([]uint8(nil), l.clk[:l.nprev]...)
		}
		sn.Learn = sl
	}
	for j := n.hist.n - 1; j >= 0; j-- {
		h := n.hist.at(j)
		key := h.key
		if key == h.out {
			key = 0 // the key is the output unless written
		}
		sn.Hist = append(sn.Hist, snapRec{
			Out: hexOrEmpty(h.out), Prog: hexOrEmpty(h.prog), Metric: h.metric,
			ErrSig: h.errSig, ProgRaw: h.progRaw, Flags: h.flags,
			Seq: seqAgo(seq, h.seq), Shape: hexOrEmpty(h.shape), Count: h.count, Action: hexOrEmpty(h.action), Key: hexOrEmpty(key),
		})
	}
	if n.hasLastProg {
		sn.LastProg = hex16(n.lastProg)
	}
	if n.hasBest {
		b := n.best
		sn.Best = &b
	}
	return sn
}

// Restore rebuilds a State from MarshalJSON's output, for the next run of a
// continued-as-new execution guarded by p. The state continues exactly;
// per-node settings and thresholds come from p, and p's declared graph is
// added to the carried one.
func Restore(p Policy, data []byte) (*State, error) {
	var sn snapshot
	if err := json.Unmarshal(data, &sn); err != nil {
		return nil, fmt.Errorf("detect: restore: %w", err)
	}
	if sn.V != snapshotVersion {
		return nil, fmt.Errorf("detect: restore: unknown snapshot version %d", sn.V)
	}
	s := newState(p)
	if err := s.restore(&sn); err != nil {
		return nil, fmt.Errorf("detect: restore: %w", err)
	}
	return s, nil
}

func (s *State) restore(sn *snapshot) error {
	const maxCarried = 1 << 16
	if len(sn.Nodes) > maxCarried || len(sn.Edges) > maxCarried || len(sn.Cycles) > maxCarried {
		return errors.New("snapshot too large")
	}
	for _, x := range sn.Nodes {
		name := truncate(x.Name, maxNameLen)
		if _, dup := s.index[name]; dup {
			return fmt.Errorf("node %q twice", name)
		}
		i := s.register(name, x.Declared)
		n := &s.nodes[i]
		n.seen, n.calls, n.steps = x.Seen, x.Calls, x.Steps
		n.run, n.cost = time.Duration(x.Run), x.Cost
		n.firstSeq, n.firstAt = x.FirstSeq, fromUnixNano(x.FirstAt)
		n.openSeq, n.openAt, n.inflight = x.OpenSeq, fromUnixNano(x.OpenAt), max(x.InFlight, 0)
		if a := x.Agg; a != nil {
			n.agg = agg{
				ended: a.Ended, ok: a.OK, out: parseHex(a.Out), errSig: truncate(a.ErrSig, maxNameLen),
				hasProg: a.HasProg, prog: parseHex(a.Prog), progRaw: truncate(a.ProgRaw, maxRawLen),
				hasMetric: a.HasMetric, metric: a.Metric, cost: a.Cost,
				shape: parseHex(a.Shape), count: a.Count, action: parseHex(a.Action), fanout: a.Fanout,
				errHash: parseHex(a.ErrHash),
			}
		}
		n.novelSeq, n.varied, n.openWaited = seqAt(sn.Seq, x.NovelSeq), x.Varied, x.Waited
		if x.Learn != nil {
			if err := n.learn.restore(x.Learn); err != nil {
				return fmt.Errorf("node %q: %w", name, err)
			}
		}
		for _, h := range x.Hist {
			r := rec{
				out: parseHex(h.Out), prog: parseHex(h.Prog), metric: h.Metric,
				errSig: truncate(h.ErrSig, maxNameLen), progRaw: truncate(h.ProgRaw, maxRawLen), flags: h.Flags,
				seq: seqAt(sn.Seq, h.Seq), shape: parseHex(h.Shape), count: h.Count, action: parseHex(h.Action), key: parseHex(h.Key),
			}
			if h.Key == "" {
				r.key = r.out
			}
			n.hist.push(r)
		}
		if x.LastProg != "" {
			n.hasLastProg, n.lastProg = true, parseHex(x.LastProg)
		}
		if x.Best != nil {
			n.hasBest, n.best = true, *x.Best
		}
		n.noImprove = x.NoImp
		n.ext.MaxCallsPerNode, n.ext.MaxNodeRuntime, n.ext.MaxEdgeWithoutProgress = x.ExtCalls, time.Duration(x.ExtRun), x.ExtEdge
		s.seenCount = max(s.seenCount, n.seen)
	}
	nn := len(s.nodes)
	valid := func(i int) bool { return i >= 0 && i < nn }
	for _, e := range sn.Edges {
		if !valid(e[0]) || !valid(e[1]) {
			return fmt.Errorf("edge %d->%d: no such node", e[0], e[1])
		}
		if s.edgeIndex(e[0], e[1]) >= 0 {
			return fmt.Errorf("edge %d->%d twice", e[0], e[1])
		}
		k := s.addEdge(e[0], e[1])
		s.edges[k].count, s.edges[k].declared = max(e[2], 0), e[3] != 0
	}
	for _, e := range s.pol.Graph {
		s.declare(e)
	}
	// The carried cycles are absorbed by the recomputed ones (the same,
	// unless the policy declares new edges).
	for _, x := range sn.Cycles {
		if len(x.Members) == 0 || !valid(x.Anchor) {
			return fmt.Errorf("cycle %s: bad members", x.ID)
		}
		for k, m := range x.Members {
			if !valid(int(m)) || (k > 0 && m <= x.Members[k-1]) {
				return fmt.Errorf("cycle %s: bad members", x.ID)
			}
		}
		s.cycles = append(s.cycles, cycle{
			id: x.ID, members: x.Members, anchor: x.Anchor, iter: max(x.Iter, 1),
			start: fromUnixNano(x.Start), hasStart: x.HasStart, restart: x.Restart, cost: x.Cost,
			ext: Extension{MaxCycleIterations: x.ExtIter, MaxCycleRuntime: time.Duration(x.ExtRun), MaxCycleCost: x.ExtCost},
		})
	}
	s.recomputeCycles()

	s.seq, s.totalCalls, s.totalSteps, s.totalCost = sn.Seq, sn.TotalCalls, sn.TotalSteps, sn.TotalCost
	s.last = sn.Last
	s.timerSeq = seqAt(sn.Seq, sn.TimerSeq)
	if c := sn.Cand; c != nil && valid(c[0]) {
		s.cand, s.candSeq = c[0], seqAt(sn.Seq, c[1])
	}
	if !valid(s.last) || s.nodes[s.last].exempt {
		s.last = -1
	}
	for _, t := range sn.Trans {
		if !valid(t[0]) || !valid(t[1]) {
			return fmt.Errorf("transition %d->%d: no such node", t[0], t[1])
		}
		s.trans.push(trans{from: int32(t[0]), to: int32(t[1]), seq: t[2], prog: int8(t[3])})
	}
	if err := s.decodeSteps(sn.Steps, valid); err != nil {
		return err
	}
	s.pending = sn.Pending
	if s.pending != nil {
		s.stop = sn.Stop
	}
	if sn.Ext != nil {
		s.ext = positive(*sn.Ext)
	}
	return nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func hexOrEmpty(h uint64) string {
	if h == 0 {
		return ""
	}
	return hex16(h)
}

func parseHex(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64)
	return v
}

func fieldStrings(fs []Field) []string {
	var out []string
	for _, f := range fs {
		s := fmt.Sprintf("%08x:%s", f.Path, hex16(f.Sum))
		if f.Num != 0 {
			s += ":" + strconv.FormatFloat(f.Num, 'g', -1, 64)
		}
		out = append(out, s)
	}
	return out
}

func hasNonZero[T int8 | uint8](v []T) bool {
	for _, x := range v {
		if x != 0 {
			return true
		}
	}
	return false
}

func parseFields(dst []Field, src []string) (int, error) {
	if len(src) > len(dst) {
		return 0, errors.New("too many fields")
	}
	for k, f := range src {
		path, sum, ok := strings.Cut(f, ":")
		p, err := strconv.ParseUint(path, 16, 32)
		if !ok || err != nil {
			return 0, fmt.Errorf("bad field %q", f)
		}
		sum, num, hasNum := strings.Cut(sum, ":")
		var v float64
		if hasNum {
			if v, err = strconv.ParseFloat(num, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("bad field %q", f)
			}
		}
		dst[k] = Field{Path: uint32(p), Sum: parseHex(sum), Num: v}
	}
	return len(src), nil
}

func (l *learning) restore(sl *snapLearn) error {
	if len(sl.Chg) > len(sl.Prev) || len(sl.Vol) > maxVolatile {
		return errors.New("learning state too large")
	}
	var err error
	if l.nprev, err = parseFields(l.prev[:], sl.Prev); err != nil {
		return err
	}
	if l.npend, err = parseFields(l.pend[:], sl.Pend); err != nil {
		return err
	}
	copy(l.chg[:], sl.Chg)
	if len(sl.Dir) > l.nprev || len(sl.Turns) > l.nprev || len(sl.Clk) > l.nprev {
		return errors.New("learning state too large")
	}
	copy(l.dir[:], sl.Dir)
	copy(l.turns[:], sl.Turns)
	copy(l.clk[:], sl.Clk)
	l.nvol = copy(l.vol[:], sl.Vol)
	l.basis = sameBasis(sl.Basis[0])
	return nil
}

// seqAgo encodes a step sequence number relative to the latest one (1: the
// latest, 0: none), so that the snapshot does not grow with the number of
// calls; seqAt decodes it.
func seqAgo(latest, seq int) int {
	if seq <= 0 {
		return 0
	}
	return latest - seq + 1
}

func seqAt(latest, ago int) int {
	if ago <= 0 {
		return 0
	}
	return latest - ago + 1
}
