package interceptor_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
)

func TestRunningGuardedQuery(t *testing.T) {
	q := interceptor.RunningGuardedQuery()
	assert.Equal(t, `TemporalChangeVersion = "loopguard-`+strconv.Itoa(interceptor.GuardVersion)+`" AND ExecutionStatus = "Running"`, q)
}

// TestDocsQuoteTheRollbackQuery: an operator who copies the rollback query
// from a doc must count every open guarded execution: a doc whose query
// names another change id would let them remove the guard under running
// executions and break their replay.
func TestDocsQuoteTheRollbackQuery(t *testing.T) {
	want := interceptor.RunningGuardedQuery()
	docs, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	docs = append(docs, "../README.md", "../CONTRIBUTING.md")
	stated := regexp.MustCompile(`TemporalChangeVersion (IN \(|= )[^'\x60\n]*`)
	quoted := 0
	for _, path := range docs {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, got := range stated.FindAllString(string(data), -1) {
			quoted++
			assert.Equal(t, want, strings.TrimSpace(got), "%s states a rollback query that is not interceptor.RunningGuardedQuery()", path)
		}
	}
	for _, path := range []string{"../README.md", "../docs/rollback.md"} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Contains(t, string(data), want, "%s must give the rollback query", path)
	}
	assert.NotZero(t, quoted)
}
