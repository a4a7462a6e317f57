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
