package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeGoBlocks returns the README's Go blocks with the workflow they
// register, in order: registering the guard (README), the workflow and
// its halt handler (the first Go block of docs/ladder.md), the test
// (README).
func readmeGoBlocks(t *testing.T) []string {
	t.Helper()
	readme := goBlocks(t, "README.md")
	require.Len(t, readme, 2, "the README's Go blocks: registering, the test")
	ladder := goBlocks(t, filepath.Join("docs", "ladder.md"))
	require.NotEmpty(t, ladder, "docs/ladder.md's Go blocks: the README's workflow first")
	return []string{readme[0], ladder[0], readme[1]}
}

// goBlocks returns the Go blocks of the markdown page at path (from root).
func goBlocks(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
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
	return blocks
}

// parseBlock parses a README block as a file of package readme.
func parseBlock(t *testing.T, fset *token.FileSet, i int, block string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(fset, "README block "+strconv.Itoa(i+1), "package readme\n"+block, parser.ParseComments)
	require.NoError(t, err, "README Go block %d does not parse as Go declarations", i+1)
	return f
}

// TestReadmeCodeShowsItsImports: a new user copies the README's blocks
// with their imports, so each block imports exactly the packages it uses
// (the sdk's interceptor package as sdkinterceptor beside ours: an alias
// nobody should have to guess).
func TestReadmeCodeShowsItsImports(t *testing.T) {
	fset := token.NewFileSet()
	for i, block := range readmeGoBlocks(t) {
		f := parseBlock(t, fset, i, block)
		imported := map[string]bool{}
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			require.NoError(t, err)
			name := path[strings.LastIndex(path, "/")+1:]
			if spec.Name != nil {
				name = spec.Name.Name
			}
			imported[name] = true
		}
		// Package names are the identifiers the parser cannot resolve in
		// the block that select something.
		unresolved := map[*ast.Ident]bool{}
		for _, id := range f.Unresolved {
			unresolved[id] = true
		}
		used := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && unresolved[id] {
					used[id.Name] = true
				}
			}
			return true
		})
		assert.Equal(t, sortedKeys(used), sortedKeys(imported), "README Go block %d: the packages it uses, and those it imports", i+1)
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestReadmeCodeCompiles: the README's Go snippets are what a new user
// copies; together, as one package, they compile and vet against the
// current API, with nothing but a stub activity added.
func TestReadmeCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	fset := token.NewFileSet()
	imports := map[string]bool{`"context"`: true} // the stub's
	var decls strings.Builder
	for i, block := range readmeGoBlocks(t) {
		f := parseBlock(t, fset, i, block)
		for _, spec := range f.Imports {
			name := ""
			if spec.Name != nil {
				name = spec.Name.Name + " "
			}
			imports[name+spec.Path.Value] = true
		}
		// The declarations, from the end of the imports on.
		start := 0
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				start = fset.Position(g.End()).Offset - len("package readme\n")
			}
		}
		decls.WriteString(block[start:] + "\n")
	}
	src := "package readme\n\nimport (\n"
	for _, imp := range sortedKeys(imports) {
		src += "\t" + imp + "\n"
	}
	src += ")\n\nfunc CallModel(context.Context, []string) (string, error) { return \"DONE\", nil }\n" + decls.String()

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
