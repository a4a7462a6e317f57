package detect

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProgressAnywhereInTheLoop (guard version 9, Policy.OneLoop): the
// stall detectors and the edge budget share one notion of progress. A
// fix-and-check loop whose fix acknowledges with a constant result and
// whose check brings new information at every iteration (a falling count
// beside a constant field, a rising float score, a count in text) is
// never halted by edge_without_progress: the check's news resets the
// edges into the constant fix. The same loop whose check repeats is still
// halted, and so is a planner that rephrases while its researcher finds
// nothing new (seed 003, TestCorpus).
func TestProgressAnywhereInTheLoop(t *testing.T) {
	ack := `{"applied": true}`
	tests := []struct {
		name     string
		give     []corpusCall
		wantHalt bool
	}{
		{"a falling count beside a constant field", fixAndCheck(7, ack, func(i int) string { return fmt.Sprintf(`{"ok": false, "errors": %d}`, 6-i) }), false},
		{"a rising float score beside a constant field", fixAndCheck(7, ack, func(i int) string { return fmt.Sprintf(`{"ok": false, "score": %.2f}`, 0.35+0.1*float64(i)) }), false},
		{"a count in text beside a constant field", fixAndCheck(7, ack, func(i int) string { return fmt.Sprintf(`{"ok": false, "log": "%d errors left"}`, 6-i) }), false},
		{"the check repeats", fixAndCheck(7, ack, func(int) string { return `{"ok": false, "errors": 4}` }), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, trip := replay(DefaultPolicy(), tt.give)
			if !tt.wantHalt {
				assert.Nil(t, trip, "halted at call %d: %v", at, trip)
				return
			}
			require.NotNil(t, trip)
			assert.Equal(t, ReasonStalled, trip.Reason)
		})
	}
}
