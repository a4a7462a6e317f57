package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestAnalyzeBadInput: each kind of file that is not a history gets a
// message in plain words that says what the file is, with no source path
// of ours or of a library, and the command exits 1 saying how many
// histories could not be read; a gzipped history, and the HTTP API's
// answer holding a whole history, are read as they are.
func TestAnalyzeBadInput(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixtureHistories, "unguarded-identical-patch.json"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		give []byte
		want string // in the message; "" for a history read
	}{
		{"good.json.gz", gzipped(t, good), ""},
		{"http-api.json", []byte(`{"history": ` + string(good) + `, "nextPageToken": null}`), ""},
		{"http-api-page.json", []byte(`{"history": ` + string(good) + `, "nextPageToken": "AQID"}`), "http-api-page.json is one page of a history exported through the HTTP API, which continues"},
		{"empty.json", nil, "empty.json is empty: a history is one JSON object"},
		{"blank.json", []byte(" \n\t\n"), "blank.json is empty"},
		{"array.json", []byte(`[` + string(good) + `]`), "array.json is a JSON array, not one history"},
		{"truncated.json", good[:len(good)/2], "truncated.json is cut short: its JSON ends after"},
		{"broken.json", []byte(`{"events": [}`), "broken.json is not valid JSON: invalid character '}'"},
		{"text.json", []byte("workflow history\n"), `text.json is not JSON: it begins "workflow history"`},
		{"other.json", []byte(`{"workflows": 3}`), "other.json is JSON but holds no history events"},
		{"wrong.json", []byte(`{"events": [{"eventId": "one"}]}`), "wrong.json is JSON but not a workflow history: "},
		{"empty.json.gz", gzipped(t, nil), "empty.json.gz is gzipped; its content is empty"},
		{"text.json.gz", gzipped(t, []byte("not json")), `text.json.gz is gzipped; its content is not JSON: it begins "not json"`},
		{"array.json.gz", gzipped(t, []byte("[]")), "array.json.gz is gzipped; its content is a JSON array"},
		{"truncated.json.gz", gzipped(t, good[:len(good)/2]), "truncated.json.gz is gzipped; its content is cut short"},
		{"cut.json.gz", gzipped(t, good)[:200], "cut.json.gz is gzipped, but its gzip data is cut short"},
		{"damaged.json.gz", append(gzipped(t, good)[:10], bytes.Repeat([]byte{0xff}, 64)...), "damaged.json.gz is gzipped, but its gzip data is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name)
			require.NoError(t, os.WriteFile(path, tc.give, 0o644))
			out, stderr, err := runAnalyzeArgs(t, path)
			if tc.want == "" {
				require.NoError(t, err, stderr)
				assert.Contains(t, out, "1 histories (1 guarded under tool_call), 40 calls")
				return
			}
			require.Error(t, err)
			var msg bytes.Buffer
			assert.Equal(t, 1, exitCode(err, &msg), "exit status")
			assert.Equal(t, progName+": 1 of 1 histories could not be read (each is named above)\n", msg.String())
			assert.Contains(t, stderr, tc.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
			for _, internal := range []string{".go:", "/pkg/mod/", "temporalproto", "protojson"} {
				assert.NotContains(t, stderr, internal)
			}
			assert.Contains(t, out, "1 histories could not be read")
		})
	}
}

// TestAnalyzeFoldersRecursively: a folder is read with the folders under
// it, *.json and *.json.gz alike, but manifest.json and dot-folders; one
// unreadable history among good ones still makes the exit status 1, and
// --output json says which.
func TestAnalyzeFoldersRecursively(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixtureHistories, "unguarded-converging.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	for path, data := range map[string][]byte{
		"a.json":                  good,
		"manifest.json":           []byte(`{}`),
		"notes.txt":               []byte("not read"),
		"2026/01/b.json.gz":       gzipped(t, good),
		"2026/01/manifest.json":   []byte(`{}`),
		"2026/02/c.json":          good,
		".git/d.json":             []byte("not read"),
		"2026/02/.cache/e.json":   []byte("not read"),
		"2026/03/cut.json":        good[:100],
		"2026/03/not-a-history":   []byte("not read"),
		"2026/03/empty-dir/.keep": nil,
	} {
		p := filepath.Join(dir, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	out, stderr, err := runAnalyzeArgs(t, "--output", "json", dir)
	require.EqualError(t, err, "1 of 4 histories could not be read (each is named above)")
	assert.Contains(t, stderr, filepath.Join(dir, "2026/03/cut.json")+" is cut short")
	var doc struct {
		Executions []struct {
			File  string `json:"file"`
			Error string `json:"error"`
		} `json:"executions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	var files []string
	for _, ex := range doc.Executions {
		rel, err := filepath.Rel(dir, ex.File)
		require.NoError(t, err)
		files = append(files, filepath.ToSlash(rel))
	}
	assert.ElementsMatch(t, []string{"a.json", "2026/01/b.json.gz", "2026/02/c.json", "2026/03/cut.json"}, files)
}

// TestAnalyzePolicyNames: a --policy that is neither a built-in nor a
// file lists the built-ins (usage error, exit status 2), for analyze and
// watch alike.
func TestAnalyzePolicyNames(t *testing.T) {
	_, _, err := runAnalyzeArgs(t, "--policy", "toolcall", fixtureHistories)
	require.Error(t, err)
	var msg bytes.Buffer
	assert.Equal(t, 2, exitCode(err, &msg))
	assert.Equal(t, progName+": --policy toolcall: neither a built-in policy (defaults, tool_call) nor a file\n", msg.String())
	_, _, err = watchOptions([]string{"--query", `WorkflowType="AgentLoop"`, "--policy", "toolcall"})
	msg.Reset()
	assert.Equal(t, 2, exitCode(err, &msg), "watch takes --policy as analyze does")
	assert.Equal(t, progName+": --policy toolcall: neither a built-in policy (defaults, tool_call) nor a file\n", msg.String())
	for _, name := range builtinPolicies {
		_, stderr, err := runAnalyzeArgs(t, "--policy", name, filepath.Join(fixtureHistories, "unguarded-converging.json"))
		assert.NoError(t, err, "built-in %s: %s", name, stderr)
	}
}

// TestAnalyzeAsRecordedLeavesUnguardedRunsOut: read as recorded, a
// history recorded without the guard (the demo's supervisor is one) is
// not a guarded run, whatever the --policy would guard.
func TestAnalyzeAsRecordedLeavesUnguardedRunsOut(t *testing.T) {
	out, stderr, err := runAnalyzeArgs(t, "--as-recorded", "--output", "json",
		filepath.Join(fixtureHistories, "unguarded-identical-patch.json"), filepath.Join(fixtureHistories, "converging-guarded.json"))
	require.NoError(t, err, stderr)
	var doc struct {
		Executions []struct {
			File       string `json:"file"`
			Guarded    bool   `json:"guarded"`
			NotGuarded string `json:"notGuarded"`
		} `json:"executions"`
	}
	require.NoError(t, json.NewDecoder(io.Reader(strings.NewReader(out))).Decode(&doc))
	require.Len(t, doc.Executions, 2)
	for _, ex := range doc.Executions {
		if strings.Contains(ex.File, "unguarded") {
			assert.False(t, ex.Guarded, ex.File)
			assert.Equal(t, "recorded without the guard", ex.NotGuarded)
		} else {
			assert.True(t, ex.Guarded, ex.File)
		}
	}
}
