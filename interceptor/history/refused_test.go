package history_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor/history"
)

// TestRefusedAnswersRecorded: a signed halt signal that reached the run
// while a halt was in force was refused by the guard (loop.status listed
// it: "already halted (halt 2)"); the analysis as recorded notes the same
// refusal on the signal's record, and the answers the guard took carry
// none (the differential test's seed 40039).
func TestRefusedAnswersRecorded(t *testing.T) {
	ex, err := history.AnalyzeFile(filepath.Join("testdata", "differential", "seed-40039-0.json"), history.Options{AsRecorded: true})
	require.NoError(t, err)
	require.NoError(t, ex.Err)
	var refused []string
	took := 0
	for _, a := range ex.Recorded.Answers {
		switch {
		case a.Refused != "":
			refused = append(refused, a.Name+": "+a.Refused)
		case !a.Handler && !a.Guard:
			took++
		}
	}
	assert.Equal(t, []string{"halt: already halted (halt 2)"}, refused)
	assert.Positive(t, took, "the resumes the guard took are not marked refused")
}
