package detect

// rec is one finalised step in a node's history.
type rec struct {
	out     uint64
	prog    uint64
	metric  float64
	errSig  string
	progRaw string
	flags   uint8
}

const (
	recFailed uint8 = 1 << iota
	recHasProg
	recHasMetric
	recSilent // succeeded without an output signal (empty result)
)

func (r *rec) failed() bool    { return r.flags&recFailed != 0 }
func (r *rec) hasProg() bool   { return r.flags&recHasProg != 0 }
func (r *rec) hasMetric() bool { return r.flags&recHasMetric != 0 }
func (r *rec) silent() bool    { return r.flags&recSilent != 0 }

// output reports whether the step carries an output signal: it succeeded
// with a non-empty result.
func (r *rec) output() bool { return r.flags&(recFailed|recSilent) == 0 }

// ring is a fixed-size history, newest entry at(0).
type ring struct {
	buf  []rec
	head int // next write position
	n    int
}

func newRing(size int) ring {
	return ring{buf: make([]rec, size)}
}

func (r *ring) push(x rec) {
	if len(r.buf) == 0 {
		return
	}
	r.buf[r.head] = x
	r.head = (r.head + 1) % len(r.buf)
	if r.n < len(r.buf) {
		r.n++
	}
}

// at returns the i-th newest entry (0 is the newest); i < r.n.
func (r *ring) at(i int) *rec {
	j := r.head - 1 - i
	if j < 0 {
		j += len(r.buf)
	}
	return &r.buf[j]
}

func (r *ring) clear() {
	clear(r.buf)
	r.head, r.n = 0, 0
}

// resize keeps the newest entries in a ring of the new size.
func (r *ring) resize(size int) {
	old := *r
	*r = newRing(size)
	for i := min(old.n, size) - 1; i >= 0; i-- {
		r.push(*old.at(i))
	}
}

// trans is one transition in the global window.
type trans struct {
	from, to int32
	seq      int  // step the transition led to
	prog     int8 // progress at that step: 0 not known yet, 1 yes, 2 no
}

const (
	progUnknown int8 = iota
	progYes
	progNo
)

// transRing is the window of the latest transitions, newest at(0).
type transRing struct {
	buf  []trans
	head int
	n    int
}

func (r *transRing) push(t trans) {
	if len(r.buf) == 0 {
		return
	}
	r.buf[r.head] = t
	r.head = (r.head + 1) % len(r.buf)
	if r.n < len(r.buf) {
		r.n++
	}
}

func (r *transRing) at(i int) *trans {
	j := r.head - 1 - i
	if j < 0 {
		j += len(r.buf)
	}
	return &r.buf[j]
}

func (r *transRing) clear() {
	clear(r.buf)
	r.head, r.n = 0, 0
}
