package history

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The reset run of testdata/reset-signed.json (TestResetRunAnsweredSigned
// in the worker writes it): the run id the server gave it, and the base
// run's, which its start event keeps as OriginalExecutionRunId.
const (
	resetRunID = "be53ef20-7fe5-4cc4-9825-e3a531421215"
	baseRunID  = "01a2233d-a699-7bd9-a508-c47d961ca35e"
)

// TestResetRunNamedAsTheServerNamesIt: the analysis of a reset run names
// it by the reset's new run id, whole or fed in chunks; as recorded, it
// takes the operator's signed resume the live guard took (key and
// guidance), where the base run's id refused it as signed for another
// execution and read the halt's end as the halt handler's.
func TestResetRunNamedAsTheServerNamesIt(t *testing.T) {
	const file = "testdata/reset-signed.json"
	for _, asRecorded := range []bool{false, true} {
		ex, err := AnalyzeFile(file, Options{AsRecorded: asRecorded})
		require.NoError(t, err)
		require.NoError(t, ex.Err)
		assert.Equal(t, resetRunID, ex.RunID, "as recorded: %v", asRecorded)
		for _, v := range ex.Verdicts {
			if v.Halt != nil {
				assert.Equal(t, resetRunID, v.Halt.RunID, "halt %d", v.Halt.Seq)
			}
		}
		if !asRecorded {
			continue
		}
		var first *interceptor.Verdict
		for i := range ex.Verdicts {
			if ex.Verdicts[i].Halt != nil && first == nil {
				first = &ex.Verdicts[i]
			}
		}
		require.NotNil(t, first)
		require.NotNil(t, first.Decision)
		assert.Equal(t, protocol.Decision{Action: protocol.ActionResume, By: "alice", HaltSeq: 1,
			Guidance: "check the API version", KeyID: "alice"}, *first.Decision)
		for _, a := range ex.Recorded.Answers {
			assert.False(t, a.Handler, "answer at event %d", a.Event)
		}
	}

	// Fed an event at a time, the reader names it so too.
	h, err := ReadHistoryFile(file)
	require.NoError(t, err)
	r, err := NewReader(Options{Follow: true})
	require.NoError(t, err)
	for _, e := range h.GetEvents() {
		require.NoError(t, r.Add(e))
	}
	assert.Equal(t, resetRunID, r.Close().RunID)
	assert.NotEqual(t, baseRunID, resetRunID)
}

// TestResetRunCopied: a reset run counts the calls its reset copied from
// the base run (those before its ResetWorkflow task failure), which a
// watcher counted when it read the base run.
func TestResetRunCopied(t *testing.T) {
	tests := []struct {
		give string
		want int
	}{
		{give: "seed-60020-0.json", want: 0}, // the first run of the chain
		{give: "seed-60020-2.json", want: 6}, // two activities and four local ones before the reset's failure
	}
	a, err := NewAnalyzer(Options{AsRecorded: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		ex := a.File(filepath.Join("testdata", "differential", tt.give))
		if ex.Err != nil || ex.Copied != tt.want {
			t.Errorf("%s: copied %d (%v), want %d", tt.give, ex.Copied, ex.Err, tt.want)
		}
	}
}
