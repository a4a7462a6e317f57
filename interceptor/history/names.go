package history

import "math"

// noName is the index names never gives: it marks a kept halt, pause or
// decision that did not fit and is kept whole.
const noName = math.MaxUint16

// names is a followed run's table of the strings its kept halts, pauses
// and decisions repeat (nodes, loops, detectors, reasons, identities,
// the heads of request ids): each is kept once, and they hold its index.
// The table only grows, so a view that holds its list as it was reads
// the same names while the reader interns more.
type names struct {
	list  []string
	index map[string]uint16
}

// intern is s's index, added if new; false when the table is full.
func (n *names) intern(s string) (uint16, bool) {
	if i, ok := n.index[s]; ok {
		return i, true
	}
	if len(n.list) >= noName {
		return 0, false
	}
	if n.index == nil {
		n.index = map[string]uint16{}
	}
	i := uint16(len(n.list))
	n.index[s] = i
	n.list = append(n.list, s)
	return i, true
}
