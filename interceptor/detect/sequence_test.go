package detect

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNoRepetitionSpansABarrier: with the lowest thresholds (a period
// seen twice), outside input inside the stretch is never read as part of
// it, and never trips (nor panics: a barrier names no node).
func TestNoRepetitionSpansABarrier(t *testing.T) {
	same := json.RawMessage(`"same"`)
	tests := []struct {
		name string
		give []corpusCall
		want bool
	}{
		{"A input A", []corpusCall{{Node: "a", Output: same}, {Input: true}, {Node: "a", Output: same}}, false},
		{"A x input A", []corpusCall{{Node: "a", Output: same}, {Node: "x", Output: same}, {Input: true}, {Node: "a", Output: same}}, false},
		{"A x A, then input", []corpusCall{{Node: "a", Output: same}, {Node: "x", Output: same}, {Node: "a", Output: same}, {Input: true}}, true},
		{"A input input A A", []corpusCall{{Node: "a", Output: same}, {Input: true}, {Input: true}, {Node: "a", Output: same}, {Node: "a", Output: same}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy()
			p.RepeatThreshold, p.ErrorRepeatThreshold = 2, 2
			raiseBudgets(&p)
			_, trip := replay(p, tt.give)
			assert.Equal(t, tt.want, trip != nil, "%v", trip)
		})
	}
}

// TestInterleavedBranchesRepeat: two parallel branches that each repeat
// finish their steps in no fixed order; the sequence is not periodic, but
// nothing in it is new, so it halts. A node that repeats while another
// node brings something new does not.
func TestInterleavedBranchesRepeat(t *testing.T) {
	c := corpusCall{Node: "code", Output: json.RawMessage(`"same patch"`)}
	v := corpusCall{Node: "verify", Output: json.RawMessage(`"same verdict"`)}
	fresh := func(s string) corpusCall { return corpusCall{Node: "verify", Output: json.RawMessage(`"` + s + `"`)} }
	tests := []struct {
		name string
		give []corpusCall
		want bool
	}{
		{"c v c c v v c", []corpusCall{c, v, c, c, v, v, c}, true},
		{"v c c v c", []corpusCall{v, c, c, v, c}, true},
		{"code repeats, verify brings news", []corpusCall{c, fresh("1 failing"), c, c, fresh("0 failing"), c}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy()
			raiseBudgets(&p)
			_, trip := replay(p, tt.give)
			assert.Equal(t, tt.want, trip != nil, "%v", trip)
		})
	}
}
