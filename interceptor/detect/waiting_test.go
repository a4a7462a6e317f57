package detect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaiting: one node polled alone with a durable timer between polls is
// waiting, not looping; without the timer, or with other nodes in the
// iteration, the repetition halts. Budgets still bound the poller.
func TestWaiting(t *testing.T) {
	pending := corpusCall{Node: "poll", Output: json.RawMessage(`{"status":"pending"}`)}
	down := corpusCall{Node: "poll", Error: "Error: service is down"}
	timed := func(c corpusCall) corpusCall { c.Timer = true; return c }
	tests := []struct {
		name     string
		give     []corpusCall
		maxCalls int
		want     Detector // "" : no halt
	}{
		{"poller with timers waits", []corpusCall{pending, timed(pending), timed(pending), timed(pending), timed(pending)}, 0, ""},
		{"poller without timers loops", []corpusCall{pending, pending, pending, pending}, 0, DetectorIdenticalOutput},
		{"timer before only some polls", []corpusCall{pending, pending, timed(pending), pending}, 0, DetectorIdenticalOutput},
		{"same error with timers waits", []corpusCall{down, timed(down), timed(down), timed(down)}, 0, ""},
		{"same error without timers", []corpusCall{down, down, down}, 0, DetectorRepeatedError},
		{"budgets still bound a waiting poller", []corpusCall{pending, timed(pending), timed(pending), timed(pending), timed(pending)}, 3, DetectorNodeCalls},
		{"a loop of two nodes with timers is stuck", []corpusCall{
			{Node: "llm", Output: json.RawMessage(`"search docs"`)}, {Node: "search", Output: json.RawMessage(`["a"]`)},
			{Node: "llm", Output: json.RawMessage(`"search docs"`), Timer: true}, {Node: "search", Output: json.RawMessage(`["a"]`)},
			{Node: "llm", Output: json.RawMessage(`"search docs"`), Timer: true}, {Node: "search", Output: json.RawMessage(`["a"]`)},
		}, 0, DetectorIdenticalOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy()
			p.MaxCallsPerNode = tt.maxCalls
			p.MaxCycleIterations = 0
			_, trip := replay(p, tt.give)
			if tt.want == "" {
				assert.Nil(t, trip)
				return
			}
			require.NotNil(t, trip)
			assert.Equal(t, tt.want, trip.Detector, trip.Message)
		})
	}
}

// TestSnapshotContinuesLearntFields: a state restored mid-run (learnt
// volatile fields: a timing that moves every step, in no order) trips
// exactly like the uninterrupted one.
func TestSnapshotContinuesLearntFields(t *testing.T) {
	p := DefaultPolicy()
	var calls []corpusCall
	for _, ms := range []string{"5", "3", "8", "2", "9", "4", "7"} {
		calls = append(calls,
			corpusCall{Node: "agent", Output: json.RawMessage(`{"action":"run","args":{"command":"ls"}}`)},
			corpusCall{Node: "run", Output: json.RawMessage(`{"content":"a.txt","elapsed_ms":` + ms + `}`)})
	}
	snapshotContinues(t, p, calls)
}

// TestSnapshotContinuesSequence: a state restored mid-run (its step
// sequence, a barrier, learnt noise whose order turned) trips exactly like
// the uninterrupted one.
func TestSnapshotContinuesSequence(t *testing.T) {
	p := DefaultPolicy()
	calls := []corpusCall{{Node: "agent", Output: json.RawMessage(`{"action":"plan"}`)}, {Input: true}}
	for _, jitter := range []string{"5", "3", "8", "2", "9", "4", "7", "1"} {
		calls = append(calls,
			corpusCall{Node: "agent", Output: json.RawMessage(`{"action":"run","args":{"command":"ls"}}`)},
			corpusCall{Node: "run", Output: json.RawMessage(`{"content":"a.txt","jitter":` + jitter + `}`)},
			corpusCall{Node: "check", Error: "ToolError: exit status 1"})
	}
	snapshotContinues(t, p, calls)
}

// TestSnapshotContinuesClock: a state restored mid-run (a clock half
// learnt: an event id the agent's action and the tool's observation
// share) trips exactly like the uninterrupted one.
func TestSnapshotContinuesClock(t *testing.T) {
	{
		p := DefaultPolicy()
		calls := []corpusCall{{Node: "agent", Output: json.RawMessage(`{"action":"plan"}`)}, {Input: true}}
		for i := range 8 {
			calls = append(calls,
				corpusCall{Node: "agent", Output: json.RawMessage(fmt.Sprintf(`{"id":%d,"action":"run","args":{"command":"ls"}}`, 10+2*i))},
				corpusCall{Node: "run", Output: json.RawMessage(fmt.Sprintf(`{"id":%d,"content":"a.txt"}`, 11+2*i))})
		}
		snapshotContinues(t, p, calls)
	}
}

func snapshotContinues(t *testing.T, p Policy, calls []corpusCall) {
	t.Helper()
	want, wantTrip := replay(p, calls)
	require.NotNil(t, wantTrip)
	for cut := 1; cut < want; cut++ {
		s := NewState(p)
		now := t0
		var got int = -1
		for i, c := range calls {
			if i == cut {
				b, err := s.MarshalJSON()
				require.NoError(t, err)
				s, err = Restore(p, b)
				require.NoError(t, err)
			}
			if c.Input {
				s.Input(now)
				continue
			}
			ref, trip := s.Begin(c.Node, now)
			if trip != nil {
				got = i
				assert.Equal(t, wantTrip.Message, trip.Message)
				break
			}
			now = now.Add(time.Second)
			s.End(ref, observe(p, c), now)
		}
		if got < 0 && s.Pending() != nil {
			got = len(calls)
		}
		assert.Equal(t, want, got, "snapshot at call %d", cut)
	}
}

// TestBudgetTable: one row per budget, consistent with Policy and
// Extension (JSON keys, Go types) and with the detectors' reasons.
func TestBudgetTable(t *testing.T) {
	rows := Budgets()
	require.Len(t, rows, 8)
	pt, et := reflect.TypeOf(Policy{}), reflect.TypeOf(Extension{})
	kinds := map[BudgetKind]reflect.Type{BudgetCount: reflect.TypeOf(0), BudgetDuration: reflect.TypeOf(time.Duration(0)), BudgetCost: reflect.TypeOf(0.0)}
	seen := map[string]bool{}
	for _, b := range rows {
		assert.False(t, seen[b.JSON], "duplicate %s", b.JSON)
		seen[b.JSON] = true
		pf, ok := pt.FieldByName(b.Option)
		require.True(t, ok, "Policy has no field %s", b.Option)
		ef, ok := et.FieldByName(b.Option)
		require.True(t, ok, "Extension has no field %s", b.Option)
		assert.Equal(t, b.JSON+",omitempty", pf.Tag.Get("json"))
		assert.Equal(t, b.JSON+",omitempty", ef.Tag.Get("json"))
		assert.Equal(t, kinds[b.Kind], pf.Type, b.Option)
		assert.Equal(t, b.Reason, reasonOf(b.Detector))
		var p Policy
		var e Extension
		b.Set(&p, 7)
		setAt(b.ExtensionField(&e), 7)
		assert.Equal(t, 7.0, b.Value(&p))
		assert.Equal(t, 7.0, b.ExtensionValue(&e))
		assert.True(t, b.Positive(&e))
		assert.True(t, raises(b.Detector, e))
		assert.NotEmpty(t, b.Doc)
		assert.NotEmpty(t, b.Reset)
		assert.NotEmpty(t, b.Default)
	}
	// Every budget field of Extension has a row.
	assert.Equal(t, et.NumField(), len(rows))
}

// TestBudgetDocs: the budget table of docs/detection.md lists every row of
// Budgets, with its Options field, detector, scope and kind.
func TestBudgetDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "detection.md"))
	require.NoError(t, err)
	doc := string(b)
	for _, r := range Budgets() {
		row := fmt.Sprintf("| `%s` | `%s` | `%s` | %s | %s |", r.JSON, r.Option, r.Detector, r.Scope, r.Kind)
		assert.Contains(t, doc, row, "docs/detection.md must list the budget %s", r.JSON)
	}
}
