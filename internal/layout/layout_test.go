package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryLinksNoServer lists every package the root module's packages
// and their tests depend on, without the workspace (as a user's build sees
// the module), and fails if the Temporal server or the UI server is among
// them, or if the module's go.mod or go.sum names them.
func TestLibraryLinksNoServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "-test", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{"go.temporal.io/server", "github.com/temporalio/ui-server", "github.com/loopguard/loopguard/worker"}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list printed %d packages: the check would see nothing", len(deps))
	}
	for _, pkg := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("the library module depends on %s", pkg)
			}
		}
	}
	for _, file := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range forbidden[:2] {
			if strings.Contains(string(data), f) {
				t.Errorf("%s names %s: every user's %s would too", file, f, file)
			}
		}
	}
}
