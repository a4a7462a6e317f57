package history

import (
	"encoding/json"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/blocks"
)

// A run's Workflow Pauses are kept as its halts are under Options.Follow
// (halted.go): a watcher follows a run for as long as it runs, and an
// operator who unpauses its halts again and again must not make the
// watcher grow with them. A pause that ended never changes again: it is
// kept compact (40 bytes), its strings (identities, reasons, the head of
// a watcher's request id: few, repeated pause after pause) in the run's
// names, the halts it superseded in one list shared by the run's pauses.
// The pause in force changes until it ends (the halts it supersedes, its
// end) and is kept whole apart.

// keptPause is an ended pause kept compact: its end and the calls
// scheduled while it held as the steps from its start and from the
// calls before it, and a watcher's request id that names the halt the
// pause answered as its head in names (flag pauseNamesHalt).
type keptPause struct {
	at                                                int64 // Time, Unix ns (0: the zero time)
	event                                             uint32
	before, haltSeq                                   int32
	supers                                            uint32 // Superseded: the count in flags of Pauses.supers from here
	toEnd, calledWhile                                uint16 // Ended-Event, Called-CalledBefore
	flags                                             uint16 // Unpaused, Resumed, the request id's seq, how many Superseded
	identity, reason, request, unpausedBy, unpauseWhy uint16 // in names; identity noName: wide[supers]
}

const (
	pauseUnpaused  = 1 << 15
	pauseResumed   = 1 << 14
	pauseNamesHalt = 1 << 13 // the request id is request + HaltSeq
	maxSupers      = pauseNamesHalt - 1
)

// nSupers is how many halts k superseded.
func (k *keptPause) nSupers() int { return int(k.flags & maxSupers) }

// Pauses are the Workflow Pauses of a run, in order; At expands one. A
// Pauses is a view: the Reader only appends to the ended pauses it
// views, and the pause in force is the view's own copy, so a Pauses
// taken from an Execution may be read from another goroutine while the
// Reader reads on. It marshals to JSON as a list of Pause.
type Pauses struct {
	kept   blocks.List[keptPause]
	supers blocks.List[int]
	names  []string
	wide   []Pause
	// now is the pause in force (nil: none), after those of kept.
	now *Pause
}

// Len is the number of pauses.
func (p Pauses) Len() int {
	if p.now != nil {
		return p.kept.Len() + 1
	}
	return p.kept.Len()
}

// At is pause i (from 0, in order).
func (p Pauses) At(i int) Pause {
	if i == p.kept.Len() && p.now != nil {
		return *p.now
	}
	k := p.kept.At(i)
	if k.identity == noName {
		return p.wide[k.supers]
	}
	out := Pause{
		Event: int64(k.event), Identity: p.names[k.identity], Reason: p.names[k.reason], RequestID: p.names[k.request],
		HaltSeq: int(k.haltSeq), Ended: int64(k.event) + int64(k.toEnd),
		Unpaused: k.flags&pauseUnpaused != 0, Resumed: k.flags&pauseResumed != 0,
		UnpausedBy: p.names[k.unpausedBy], UnpauseReason: p.names[k.unpauseWhy],
		Called: int(k.before) + int(k.calledWhile), CalledBefore: int(k.before),
	}
	if k.flags&pauseNamesHalt != 0 {
		out.RequestID += strconv.Itoa(int(k.haltSeq))
	}
	for j := range k.nSupers() {
		out.Superseded = append(out.Superseded, *p.supers.At(int(k.supers) + j))
	}
	if k.at != 0 {
		out.Time = time.Unix(0, k.at).UTC()
	}
	return out
}

// All yields every pause with its index, in order.
func (p Pauses) All() iter.Seq2[int, Pause] {
	return func(yield func(int, Pause) bool) {
		for i := range p.Len() {
			if !yield(i, p.At(i)) {
				return
			}
		}
	}
}

// Last is the newest pause (false: none).
func (p Pauses) Last() (Pause, bool) {
	if p.Len() == 0 {
		return Pause{}, false
	}
	return p.At(p.Len() - 1), true
}

// Answering is the pause that answered halt seq or superseded it (false:
// none). It reads the pauses compact and expands only that one: a
// watcher asks it of every halt it lists.
func (p Pauses) Answering(seq int) (Pause, bool) {
	for i := p.Len() - 1; i >= 0; i-- {
		if p.answers(i, seq) {
			return p.At(i), true
		}
	}
	return Pause{}, false
}

// answers reports whether pause i answered or superseded halt seq.
func (p Pauses) answers(i, seq int) bool {
	if i < p.kept.Len() {
		if k := p.kept.At(i); k.identity != noName && k.nSupers() == 0 {
			return int(k.haltSeq) == seq // the common case, read at once
		}
	}
	for s := range p.seqs(i) {
		if s == seq {
			return true
		}
	}
	return false
}

// seqs are the halt seqs pause i answered (0: none) and superseded, read
// without expanding it.
func (p Pauses) seqs(i int) iter.Seq[int] {
	return func(yield func(int) bool) {
		if i == p.kept.Len() || p.kept.At(i).identity == noName {
			q := p.now
			if i < p.kept.Len() {
				q = &p.wide[p.kept.At(i).supers]
			}
			if yield(q.HaltSeq) {
				for _, s := range q.Superseded {
					if !yield(s) {
						return
					}
				}
			}
			return
		}
		k := p.kept.At(i)
		if !yield(int(k.haltSeq)) {
			return
		}
		for j := range k.nSupers() {
			if !yield(*p.supers.At(int(k.supers) + j)) {
				return
			}
		}
	}
}

// answered are the halt seqs the pauses answered or superseded.
func (p Pauses) answered() map[int]bool {
	out := map[int]bool{}
	for i := range p.Len() {
		for s := range p.seqs(i) {
			out[s] = true
		}
	}
	return out
}

// List is every pause expanded, in order.
func (p Pauses) List() []Pause {
	out := make([]Pause, 0, p.Len())
	for _, q := range p.All() {
		out = append(out, q)
	}
	return out
}

// resumed is the resume the unpause of the pause that answered halt seq
// noted on it (false: none did).
func (p Pauses) resumed(seq int) (protocol.Decision, bool) {
	for i := p.Len() - 1; i >= 0; i-- {
		if i < p.kept.Len() {
			// The common case, read without expanding the pause.
			if k := p.kept.At(i); k.identity != noName && (int(k.haltSeq) != seq || k.flags&pauseResumed == 0) {
				continue
			}
		}
		if q := p.At(i); q.Resumed && q.HaltSeq == seq {
			return protocol.Decision{Action: protocol.ActionResume, Reason: q.UnpauseReason, By: q.UnpausedBy, HaltSeq: seq}, true
		}
	}
	return protocol.Decision{}, false
}

// MarshalJSON writes the pauses as a list of Pause.
func (p Pauses) MarshalJSON() ([]byte, error) { return json.Marshal(p.List()) }

// UnmarshalJSON reads a list of Pause, the last one in force if it has
// not ended.
func (p *Pauses) UnmarshalJSON(b []byte) error {
	var list []Pause
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*p = PausesOf(list...)
	return nil
}

// PausesOf keeps pauses as a Reader keeps a run's (for a follower's
// tests): the last is the pause in force if it has not ended.
func PausesOf(pauses ...Pause) Pauses {
	var k pauseKeeper
	for i, q := range pauses {
		if i == len(pauses)-1 && q.Ended == 0 {
			k.begin(q)
			break
		}
		k.keep(q)
	}
	return k.view()
}

// pauseKeeper keeps a run's pauses: the ended ones compact, the one in
// force (cur) whole, its names in tab (the run's, shared with its
// halts; its own when nil).
type pauseKeeper struct {
	Pauses
	cur *Pause
	tab *names
}

// begin makes p the pause in force.
func (k *pauseKeeper) begin(p Pause) { k.cur = &p }

// end keeps the pause in force, whose end the caller has set, compact.
func (k *pauseKeeper) end() {
	if k.cur != nil {
		k.keep(*k.cur)
		k.cur = nil
	}
}

// view is the pauses so far, for another goroutine to read.
func (k *pauseKeeper) view() Pauses {
	v := k.Pauses
	if k.cur != nil {
		c := *k.cur
		c.Superseded = slices.Clone(c.Superseded)
		v.now = &c
	}
	return v
}

// all is the pauses so far, the one in force shared with the keeper: for
// the reader's own use, never handed over.
func (k *pauseKeeper) all() Pauses {
	v := k.Pauses
	v.now = k.cur
	return v
}

// keep appends ended pause p, compact if it fits.
func (k *pauseKeeper) keep(p Pause) {
	if k.tab == nil {
		k.tab = &names{}
	}
	c := keptPause{flags: uint16(min(len(p.Superseded), maxSupers)), supers: uint32(k.supers.Len())}
	if p.Unpaused {
		c.flags |= pauseUnpaused
	}
	if p.Resumed {
		c.flags |= pauseResumed
	}
	fits := p.Event >= 0 && p.Event <= math.MaxUint32 && p.Ended >= p.Event && p.Ended-p.Event <= math.MaxUint16 &&
		p.CalledBefore >= 0 && p.CalledBefore <= math.MaxInt32 && p.Called >= p.CalledBefore && p.Called-p.CalledBefore <= math.MaxUint16 &&
		p.HaltSeq >= 0 && p.HaltSeq <= math.MaxInt32 &&
		len(p.Superseded) <= maxSupers && k.supers.Len()+len(p.Superseded) <= math.MaxUint32
	c.event, c.toEnd = uint32(p.Event), uint16(p.Ended-p.Event)
	c.before, c.calledWhile, c.haltSeq = int32(p.CalledBefore), uint16(p.Called-p.CalledBefore), int32(p.HaltSeq)
	if !p.Time.IsZero() {
		c.at = p.Time.UnixNano()
		// A time UnixNano cannot hold, or the epoch (0 is the zero time
		// here), is kept whole.
		fits = fits && c.at != 0 && time.Unix(0, c.at).Equal(p.Time)
	}
	request := p.RequestID
	if seq := RequestedHalt(request); seq > 0 && seq == p.HaltSeq {
		if head, ok := strings.CutSuffix(request, strconv.Itoa(seq)); ok {
			request = head
			c.flags |= pauseNamesHalt
		}
	}
	for _, n := range []struct {
		to *uint16
		s  string
	}{{&c.identity, p.Identity}, {&c.reason, p.Reason}, {&c.request, request},
		{&c.unpausedBy, p.UnpausedBy}, {&c.unpauseWhy, p.UnpauseReason}} {
		i, ok := k.tab.intern(n.s)
		fits = fits && ok
		*n.to = i
	}
	k.names = k.tab.list
	if !fits {
		p.Superseded = slices.Clone(p.Superseded)
		c = keptPause{identity: noName, supers: uint32(len(k.wide))}
		k.wide = append(k.wide, p)
	} else {
		for _, seq := range p.Superseded {
			k.supers.Add(seq)
		}
	}
	k.kept.Add(c)
}

// IsZero reports whether there is no pause (JSON's omitzero).
func (p Pauses) IsZero() bool { return p.Len() == 0 }
