package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
)

// documentedAnswer is a `go run ./worker answer ...` line of a code
// block in the README or a page under docs/.
var documentedAnswer = regexp.MustCompile(`(?m)^(?:    )?go run \./worker answer (.+)$`)

// TestDocumentedAnswerCommandsRun runs every `go run ./worker answer`
// command the README and docs/ give in a code block, as written, against
// the embedded server: each on a fresh run in the state it answers (a
// halted run, or one Temporal's Workflow Pause holds for unpause), its
// workflow id the only change. Each is taken.
func TestDocumentedAnswerCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	require.NoError(t, err)
	pages = append([]string{filepath.Join("..", "README.md")}, pages...)
	type command struct{ page, line string }
	var commands []command
	for _, p := range pages {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, m := range documentedAnswer.FindAllStringSubmatch(string(data), -1) {
			commands = append(commands, command{filepath.Base(p), m[1]})
		}
	}
	require.GreaterOrEqual(t, len(commands), 11, "the README and halts.md give the answers")

	ctx := testContext(t, 4*time.Minute)
	s := startPlain(t, ctx)
	for i, cmd := range commands {
		args := shellWords(cmd.line)
		id := fmt.Sprintf("doc-%d", i)
		var fresh []string
		for k, a := range args {
			if k > 0 && args[k-1] == "--workflow-id" {
				a = id
			}
			fresh = append(fresh, a)
		}
		if strings.Contains(cmd.line, "--workflow-id") {
			s.start(t, ctx, id, "ThinkingAgent")
			s.waitFor(t, ctx, id, halted(1))
		}
		if fresh[len(fresh)-1] == "unpause" {
			_, err := s.c.WorkflowService().PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
				Namespace: s.srv.Namespace(), WorkflowId: id, Identity: "loopguard-watch@docs", Reason: "loopguard: a loop", RequestId: id})
			require.NoError(t, err)
		}
		out, err := s.plainAnswer(ctx, fresh...)
		if assert.NoError(t, err, "%s: go run ./worker answer %s", cmd.page, cmd.line) {
			assert.NotEmpty(t, out, cmd.line)
		}
	}
}
