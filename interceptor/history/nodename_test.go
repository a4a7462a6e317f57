package history

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
)

// TestAnalyzeRecoversAPanickingNodeName: a NodeName hook that panics
// names the call by its type in the analysis, as in the live guard (the
// core's callNode recovers it), and the history's problems say so once:
// the analysis neither crashes nor repeats the line at every call. The
// reader named its calls with the hook directly, and a panic in it
// crashed the analysis.
func TestAnalyzeRecoversAPanickingNodeName(t *testing.T) {
	opts := Options{Guard: interceptor.Options{NodeName: func(c interceptor.Call) string {
		if c.Type == "Code" {
			panic("the hook's bug")
		}
		return ""
	}}}
	path := filepath.Join(fixtureDir, "unguarded-scripted-stall.json")
	want, err := AnalyzeFile(path, Options{})
	require.NoError(t, err)
	got, err := AnalyzeFile(path, opts)
	require.NoError(t, err)
	require.NotEmpty(t, got.Calls)
	assert.Contains(t, got.Calls, "Code")
	assert.Equal(t, want.Calls, got.Calls, "named by their types, as without a hook")
	assert.Equal(t, len(want.Verdicts), len(got.Verdicts))
	panics := 0
	for _, p := range got.Problems {
		if strings.Contains(p, "NodeName panicked") {
			panics++
		}
	}
	assert.Equal(t, 1, panics, "said once: %q", got.Problems)

	// A growing history, fed event by event, says it once too.
	h, err := ReadHistoryFile(path)
	require.NoError(t, err)
	r, err := NewReader(opts)
	require.NoError(t, err)
	for _, e := range h.GetEvents() {
		require.NoError(t, r.Add(e))
	}
	grown := r.Close()
	assert.Equal(t, got.Calls, grown.Calls)
	assert.Equal(t, got.Problems, grown.Problems)
}
