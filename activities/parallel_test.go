package activities

import (
	"errors"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

// parallelTurn is one turn of the scripted parallel agent: the model's
// reply to the previous results, and its tool calls' results.
func parallelTurn(t *testing.T, req ModelRequest, n protocol.Notice) (ModelReply, []ToolResult) {
	t.Helper()
	reply, err := scriptModelTurn(req, n)
	require.NoError(t, err)
	var results []ToolResult
	for _, c := range reply.Calls {
		r, err := scriptTool(c.Tool, c)
		require.NoError(t, err)
		results = append(results, r)
	}
	return reply, results
}

// TestParallelScripts: the stuck model asks for the same calls and gets
// the same results every turn; the progressing one gets results that
// differ in words, not only numbers (the guard reads numbers as one
// token), and answers after ParallelProgressTurns turns; the heeding one
// changes its calls when warned, then answers.
func TestParallelScripts(t *testing.T) {
	for _, width := range []int{1, 2, 8, MaxParallelCalls} {
		for _, mixed := range []bool{false, true} {
			req := ModelRequest{Scenario: ParallelStuck, Width: width, Mixed: mixed}
			var first []ToolResult
			for turn := 1; turn <= 4; turn++ {
				req.Turn = turn
				reply, results := parallelTurn(t, req, protocol.Notice{})
				require.Len(t, reply.Calls, width)
				require.Empty(t, reply.Answer)
				if turn == 1 {
					first = results
				}
				require.Equal(t, first, results, "stuck: the same results every turn")
				req.Results = results
			}
			for i, c := range first {
				want := ToolWebSearch
				if mixed && i%2 == 1 {
					want = ToolFetchPage
				}
				require.Equal(t, want, c.Call.Tool, "call %d", i)
			}

			req = ModelRequest{Scenario: ParallelProgressing, Width: width, Mixed: mixed}
			seen := map[string]bool{}
			for turn := 1; ; turn++ {
				req.Turn = turn
				reply, results := parallelTurn(t, req, protocol.Notice{})
				if reply.Answer != "" {
					require.Equal(t, ParallelProgressTurns+1, turn)
					break
				}
				for _, r := range results {
					words := strings.Map(func(r rune) rune {
						if r >= '0' && r <= '9' {
							return '#'
						}
						return r
					}, r.Text)
					require.False(t, seen[words], "turn %d: %q seen before", turn, r.Text)
					seen[words] = true
				}
				req.Results = results
			}

			req = ModelRequest{Scenario: ParallelHeeds, Width: width, Mixed: mixed, Turn: 1}
			reply, results := parallelTurn(t, req, protocol.Notice{})
			req.Turn, req.Results = 2, results
			warned := protocol.Notice{Warning: &protocol.Warning{N: 1, Of: 1, Directive: "change your approach"}}
			heeded, results := parallelTurn(t, req, warned)
			require.Equal(t, "warning 1/1: change your approach", heeded.Heeded)
			require.NotEqual(t, reply.Calls, heeded.Calls, "warned, it changes its calls")
			req.Turn, req.Results = 3, results
			done, _ := parallelTurn(t, req, protocol.Notice{})
			require.NotEmpty(t, done.Answer, "it answers once it has read the new results")
		}
	}
}

func TestParallelBadRequests(t *testing.T) {
	for _, req := range []ModelRequest{
		{Scenario: "converging", Width: 2},
		{Scenario: ParallelStuck, Width: 0},
		{Scenario: ParallelStuck, Width: MaxParallelCalls + 1},
	} {
		_, err := scriptModelTurn(req, protocol.Notice{})
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%+v", req)
		require.True(t, app.NonRetryable())
	}
	_, err := scriptTool(ToolWebSearch, ToolCall{Tool: ToolFetchPage, Query: "docs"})
	require.Error(t, err, "a tool runs its own calls only")
}
