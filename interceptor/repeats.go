package interceptor

import (
	"encoding/binary"

	"go.temporal.io/sdk/converter"
)

// maxActions bounds the distinct actions a guard counts (Options.CountRepeats):
// about 40 KB of workflow memory at the most, however long the run.
const maxActions = 1024

// repeats counts the guarded calls of a run by action: node and arguments
// (Options.CountRepeats). Lookups only, never iterated: the count of a call
// depends on the calls before it alone.
type repeats struct {
	seen map[uint64]int
}

// count records a call of node with args and returns how many calls of the
// same action came before it. A call whose arguments do not encode, and a
// new action once maxActions are known, are not counted (0): which actions
// are known depends only on the order of the calls, so replay agrees.
func (r *repeats) count(node string, args []any) int {
	ps, err := converter.GetDefaultDataConverter().ToPayloads(args...)
	if err != nil {
		return 0
	}
	h := fnv64a(fnvOffset, []byte(node))
	var n [8]byte
	for _, p := range ps.GetPayloads() {
		// Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
		binary.LittleEndian.PutUint64(n[:], uint64(len(p.GetData())))
		h = fnv64a(fnv64a(h, n[:]), p.GetData())
	}
	if r.seen == nil {
		r.seen = map[uint64]int{}
	}
	before, ok := r.seen[h]
	if !ok && len(r.seen) >= maxActions {
		return 0
	}
	r.seen[h] = before + 1
	return before
}

// FNV-64a, inline: hash/fnv's hasher is an interface value, which would
// allocate on every call.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv64a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}
