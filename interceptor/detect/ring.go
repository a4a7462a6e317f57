package detect

// rec is one finalised step in a node's history.
type rec struct {
	out     uint64
	prog    uint64
	metric  float64
	errSig  string
	progRaw string
	flags   uint8
	seq     int    // the step's sequence number
	shape   uint64 // Observation.Shape
	count   int64  // Observation.Count
	action  uint64 // Observation.Action
	key     uint64 // what the rules compare (Action, or Output)
}

const (
	recFailed uint8 = 1 << iota
	recHasProg
	recHasMetric
	recSilent // succeeded without an output signal (empty result)
	recFuzzy  // same as the node's previous step but for learnt volatile fields
	recWaited // followed a durable timer and a step of the same node, nothing between
	recNovel  // brought something new
)

func (r *rec) failed() bool    { return r.flags&recFailed != 0 }
func (r *rec) hasProg() bool   { return r.flags&recHasProg != 0 }
func (r *rec) hasMetric() bool { return r.flags&recHasMetric != 0 }
func (r *rec) silent() bool    { return r.flags&recSilent != 0 }
func (r *rec) waited() bool    { return r.flags&recWaited != 0 }

// output reports whether the step carries an output signal: it succeeded
// with a non-empty result.
func (r *rec) output() bool { return r.flags&(recFailed|recSilent) == 0 }

// ring is a fixed-size history, newest entry at(0): a node's steps
// (ring[rec]) or the latest transitions (ring[trans]).
type ring[T any] struct {
	buf  []T
	head int // next write position
	n    int
}

func newRing[T any](size int) ring[T] {
	return ring[T]{buf: make([]T, size)}
}

func (r *ring[T]) push(x T) {
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
func (r *ring[T]) at(i int) *T {
	j := r.head - 1 - i
	if j < 0 {
		j += len(r.buf)
	}
	return &r.buf[j]
}

func (r *ring[T]) clear() {
	clear(r.buf)
	r.head, r.n = 0, 0
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
