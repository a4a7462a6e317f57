package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// fixtureHistories are the recorded histories of package testsuite.
const fixtureHistories = "../testsuite/testdata/histories"

// countFixtureHistories counts the recorded histories (every JSON file but
// the manifest): the count grows with each guard version's fixtures.
func countFixtureHistories(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureHistories, "*.json"))
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		if filepath.Base(f) != "manifest.json" {
			n++
		}
	}
	require.NotZero(t, n)
	return n
}

func runAnalyzeArgs(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{analyzeCommand}, args...), &out, &errb)
	return out.String(), errb.String(), err
}

// TestAnalyzeCommand: `worker analyze DIR` prints the summary and a table
// worst loops first; --output json is one JSON document whose summary
// agrees; repeated --policy prints a sweep side by side.
func TestAnalyzeCommand(t *testing.T) {
	n := countFixtureHistories(t)
	out, _, err := runAnalyzeArgs(t, "--top", "3", fixtureHistories)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Contains(t, lines[0], fmt.Sprintf("%d histories (%d guarded under tool_call)", n, n))
	assert.Contains(t, out, "WORKFLOW")
	assert.Contains(t, out, "FIRST HALT")
	table := lines[len(lines)-3:]
	assert.Contains(t, table[0], "fixture-workload", "the worst loop (most calls saved) first")

	js, _, err := runAnalyzeArgs(t, "--output", "json", fixtureHistories)
	require.NoError(t, err)
	var doc struct {
		Executions []json.RawMessage `json:"executions"`
		Summaries  []struct {
			Policy     string `json:"policy"`
			Executions int    `json:"executions"`
			Halts      int    `json:"halts"`
		} `json:"summaries"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &doc))
	assert.Len(t, doc.Executions, n)
	require.Len(t, doc.Summaries, 1)
	assert.Equal(t, n, doc.Summaries[0].Executions)

	sweep, _, err := runAnalyzeArgs(t, "--policy", "defaults", "--policy", "tool_call",
		"--policy", filepath.Join("..", "docs", "analysis", "draft-policy.json"), fixtureHistories)
	require.NoError(t, err)
	assert.Contains(t, sweep, "defaults")
	assert.Contains(t, sweep, "tool_call")
	assert.Contains(t, sweep, "draft-policy.json")
	assert.Contains(t, sweep, "calls saved")

	labels := filepath.Join(t.TempDir(), "labels.json")
	require.NoError(t, os.WriteFile(labels, []byte(`{"fixture-unguarded-identical-patch": {"loop": true, "onset": 3}, "fixture-unguarded-converging": {"loop": false}}`), 0o644))
	scored, _, err := runAnalyzeArgs(t, "--labels", labels, "--policy", "defaults", "--policy", "tool_call", fixtureHistories)
	require.NoError(t, err)
	assert.Regexp(t, `loops halted\s+1/1\s+1/1`, scored)
	assert.Regexp(t, `progressing halted\s+0/1\s+0/1`, scored)
	one, _, err := runAnalyzeArgs(t, "--labels", labels, "--top", "0", fixtureHistories)
	require.NoError(t, err)
	// The default policy warns once first: the halt comes later than the
	// trip, within HaltBound of it.
	assert.Contains(t, one, "labels: 1/1 loops halted (median 8 calls after their onset), 0/1 progressing runs halted")
}

// TestAnalyzeCommandBadInput: a file that is not a history is reported on
// stderr by name, and the rest are analysed, the exit status saying the
// report lacks one (TestAnalyzeBadInput has each kind); bad flags are
// usage errors.
func TestAnalyzeCommandBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"events": [`), 0o644))
	out, stderr, err := runAnalyzeArgs(t, bad, filepath.Join(fixtureHistories, "unguarded-identical-patch.json"))
	require.EqualError(t, err, "1 of 2 histories could not be read (each is named above)")
	assert.Contains(t, stderr, bad)
	assert.Contains(t, out, "2 histories (1 guarded under tool_call)")
	assert.Contains(t, out, "1 histories could not be read")

	for _, args := range [][]string{
		{},
		{"--output", "yaml", fixtureHistories},
		{"--policy", "missing.json", fixtureHistories},
		{"--query", "WorkflowType='x'", fixtureHistories},
	} {
		_, _, err := runAnalyzeArgs(t, args...)
		var ue *usageError
		assert.ErrorAs(t, err, &ue, "%v", args)
	}
}

// TestAnalyzeQuery: --query reads the executions a visibility query
// selects from the server, page by page, connecting as the temporal CLI
// does (--address, --namespace).
func TestAnalyzeQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	srv := devtest.StartServer(t, devserver.Options{Ephemeral: true, FreePorts: true, UIDisabled: true, StartTimeout: 60 * time.Second})
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const queue = "analyze-query"
	testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{Register: fixtures.Register}) // no guard
	for i := 0; i < 3; i++ {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("%s-%d", queue, i), TaskQueue: queue},
			fixtures.WorkflowScripted, fixtures.Stalling("Code", 8, 2))
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
	}
	query := fmt.Sprintf("WorkflowType = %q", fixtures.WorkflowScripted)
	require.Eventually(t, func() bool {
		n, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: srv.Namespace(), Query: query})
		return err == nil && n.GetCount() == 3
	}, 30*time.Second, 100*time.Millisecond, "visibility lists the runs")

	out, stderr, err := runAnalyzeArgs(t, "--address", srv.FrontendHostPort(), "--namespace", srv.Namespace(),
		"--query", query, "--rate", "50")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "3 histories (3 guarded under tool_call), 24 calls")
	assert.Contains(t, out, "would halt")
	assert.Contains(t, out, queue+"-")

	// A history exported through the server's HTTP API (payloads in its
	// shorthand, the events under "history") reads as the CLI's export.
	url := fmt.Sprintf("http://%s/api/v1/namespaces/%s/workflows/%s-0/history", srv.HTTPHostPort(), srv.Namespace(), queue)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	dir := t.TempDir()
	viaHTTP := filepath.Join(dir, "http.json")
	require.NoError(t, os.WriteFile(viaHTTP, body, 0o644))
	t.Logf("HTTP API export: %.400s", body)
	viaCLI := filepath.Join(dir, "cli.json")
	h, err := history.ExportHistory(ctx, c, queue+"-0", "")
	require.NoError(t, err)
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(viaCLI, data, 0o644))
	httpOut, stderr, err := runAnalyzeArgs(t, viaHTTP)
	require.NoError(t, err, stderr)
	cliOut, stderr, err := runAnalyzeArgs(t, viaCLI)
	require.NoError(t, err, stderr)
	assert.Equal(t, strings.ReplaceAll(cliOut, viaCLI, "FILE"), strings.ReplaceAll(httpOut, viaHTTP, "FILE"))
}

// TestProgressOnlyOnATerminal: the progress bar is drawn on a terminal
// only, so that redirected output and pipelines stay clean.
func TestProgressOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 1000)
	p.add(500)
	p.done()
	assert.Empty(t, buf.String())
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	p = newProgress(f, 1000)
	p.add(1000)
	p.done()
	fi, err := f.Stat()
	require.NoError(t, err)
	assert.Zero(t, fi.Size(), "a file is not a terminal")
}
