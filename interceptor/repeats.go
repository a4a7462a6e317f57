package interceptor

import (
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor/detect"
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
	var buf [4][]byte // no allocation for the usual few arguments
	datas := buf[:0]
	for _, p := range ps.GetPayloads() {
		datas = append(datas, p.GetData())
	}
	h := detect.ActionKey(node, datas)
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
