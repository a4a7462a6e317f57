package activities

import (
	"context"
	"strings"
)

// The prefixes a workflow that keeps its conversation puts before what the
// guard tells it (workflows.ChatAgent), so that the scripted model can
// tell a warning and guidance from the task.
const (
	WarningPrefix  = "Loop warning: "
	GuidancePrefix = "A reviewer says: "
)

// The scripted model's tool calls, and the file its guidance names.
const (
	ToolRunTests = "go test ./cache"
	ToolGrepTTL  = "grep -n ttl cache/ttl.go"
	ToolReadFile = "read_file "
	GuidanceFile = "cache/ttl.go"
)

// ChatTools are the scripted model and tools of workflows.ChatAgent.
// Register them with w.RegisterActivity(&activities.ChatTools{}): the
// activity types (the guard's nodes) are Chat and RunTool.
type ChatTools struct{}

// ChatMessage is one message of a conversation the workflow keeps.
type ChatMessage struct {
	Role string `json:"role"` // user, assistant, tool or system
	Text string `json:"text"`
}

// ChatRequest is what a workflow sends its model: the whole prompt.
type ChatRequest struct {
	Messages []ChatMessage `json:"messages"`
	// Stubborn makes the model ignore warnings (it still follows
	// guidance), to show the rest of the ladder.
	Stubborn bool `json:"stubborn,omitempty"`
}

// ChatReply is the model's next move: a tool call, or its final answer.
type ChatReply struct {
	Tool   string `json:"tool,omitempty"`
	Answer string `json:"answer,omitempty"`
}

// Chat is a scripted model for an agent whose conversation lives in the
// workflow: given the prompt, it re-runs the failing tests forever (the
// loop), unless the prompt carries guidance (it reads the file the
// guidance names, then answers) or, when not stubborn, a warning (it
// looks for the bug another way, then answers). A pure function of the
// request.
func (c *ChatTools) Chat(_ context.Context, req ChatRequest) (ChatReply, error) {
	var warned, guided bool
	called := map[string]bool{}
	for _, m := range req.Messages {
		switch {
		case m.Role == "system" && strings.HasPrefix(m.Text, GuidancePrefix):
			guided = true
		case m.Role == "system" && strings.HasPrefix(m.Text, WarningPrefix):
			warned = true
		case m.Role == "assistant":
			called[m.Text] = true
		}
	}
	switch {
	case guided && called[ToolReadFile+GuidanceFile]:
		return ChatReply{Answer: "fixed the TTL arithmetic in " + GuidanceFile + ", as the reviewer said"}, nil
	case guided:
		return ChatReply{Tool: ToolReadFile + GuidanceFile}, nil
	case warned && !req.Stubborn && called[ToolGrepTTL]:
		return ChatReply{Answer: "the TTL is multiplied twice in " + GuidanceFile + "; fixed"}, nil
	case warned && !req.Stubborn:
		return ChatReply{Tool: ToolGrepTTL}, nil
	}
	return ChatReply{Tool: ToolRunTests}, nil
}

// RunTool runs a tool call of Chat, scripted: the tests fail the same way
// every time, the other tools show the bug.
func (c *ChatTools) RunTool(_ context.Context, call string) (string, error) {
	switch call {
	case ToolRunTests:
		return "--- FAIL: TestTTL (0.00s)\n    ttl_test.go:12: ttl = 3600h, want 1h\nFAIL", nil
	case ToolGrepTTL:
		return "40:\tttl := d * time.Second * time.Second", nil
	case ToolReadFile + GuidanceFile:
		return "package cache\n\n// expiry returns when an entry expires.\nfunc expiry(d time.Duration) time.Duration {\n\tttl := d * time.Second * time.Second\n\treturn ttl\n}", nil
	}
	return "unknown tool: " + call, nil
}
