package typescript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMinNodeIsTheSDKs: the Node.js version Available requires (the
// agent's engines.node) is the one the locked @temporalio packages
// declare, so that a skip's reason names the SDK's own floor.
func TestMinNodeIsTheSDKs(t *testing.T) {
	dir, err := AgentDir()
	require.NoError(t, err)
	least, err := minNode(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	require.NoError(t, err)
	var lock struct {
		Packages map[string]struct {
			Version string            `json:"version"`
			Engines map[string]string `json:"engines"`
		} `json:"packages"`
	}
	require.NoError(t, json.Unmarshal(b, &lock))
	for _, name := range []string{"worker", "workflow", "activity", "core-bridge"} {
		p, ok := lock.Packages["node_modules/@temporalio/"+name]
		require.True(t, ok, "@temporalio/%s is not locked", name)
		v, err := parseVersion(p.Engines["node"][len(">= "):])
		require.NoError(t, err)
		require.Equal(t, least, v, "@temporalio/%s %s requires node %s", name, p.Version, p.Engines["node"])
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string][]int{"v20.20.2": {20, 20, 2}, "20.3.0": {20, 3, 0}, "v18": {18, 0, 0}} {
		got, err := parseVersion(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := parseVersion("vX")
	require.Error(t, err)
}

// TestUnavailable: without node the reason says so, and it skips the
// test, or fails it under RequireEnv=1.
func TestUnavailable(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	reason := available()
	require.Equal(t, "node (Node.js) is not on PATH", reason)

	t.Setenv(RequireEnv, "")
	tb := &recordingTB{TB: t}
	unavailable(tb, reason)
	require.Equal(t, "skip", tb.did)
	require.Contains(t, tb.msg, reason)

	t.Setenv(RequireEnv, "1")
	tb = &recordingTB{TB: t}
	unavailable(tb, reason)
	require.Equal(t, "fatal", tb.did)
	require.Contains(t, tb.msg, reason)
}

// recordingTB records a Skipf or Fatalf instead of ending the test.
type recordingTB struct {
	testing.TB
	did, msg string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skipf(format string, args ...any) {
	r.did, r.msg = "skip", fmt.Sprintf(format, args...)
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.did, r.msg = "fatal", fmt.Sprintf(format, args...)
}
