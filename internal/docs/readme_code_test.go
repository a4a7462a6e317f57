package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeHarness wraps the README's Go blocks, in order: the first is the
// body of a function given a client, the second declares the workflow and
// its halt handler, the third is the body of a test given the options.
const readmeHarness = `package readme

import (
	"context"
	"log"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
)

func CallModel(context.Context, []string) (string, error) { return "DONE", nil }

func register(c client.Client) error {
%s
	_ = w
	return nil
}

%s

func testIt(t *testing.T, opts interceptor.Options) {
%s
}
`

// TestReadmeCodeCompiles: the README's Go snippets are what a new user
// copies; they compile and vet against the current API.
func TestReadmeCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	var blocks []string
	for rest := string(data); ; {
		i := strings.Index(rest, "```go\n")
		if i < 0 {
			break
		}
		rest = rest[i+len("```go\n"):]
		end := strings.Index(rest, "```")
		blocks = append(blocks, rest[:end])
		rest = rest[end:]
	}
	require.Len(t, blocks, 3, "the README's Go blocks: registering, the workflow, the test")
	src := strings.Replace(readmeHarness, "%s", blocks[0], 1)
	src = strings.Replace(src, "%s", blocks[1], 1)
	src = strings.Replace(src, "%s", blocks[2], 1)

	// A package inside the module (testdata, so ./... never sees it), so
	// that its imports resolve as the repository's own.
	dir, err := os.MkdirTemp("testdata", "readme-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "readme.go"), []byte(src), 0o644))
	cmd := exec.Command("go", "vet", "./"+filepath.ToSlash(dir))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's Go code does not compile:\n%s\n%s", out, src)
}
