package interceptor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCoreTakesNoWorkflowTypes: no method of the core takes or returns a
// Temporal workflow type (workflow.Context, a future, the SDK's
// interceptors): the core decides and its drivers act, so that a driver
// without a workflow (the Judge, and the watcher through it) runs the same
// decisions. The package's own files are read, so a method added to the
// core with a workflow.Context fails here, wherever it is written.
func TestCoreTakesNoWorkflowTypes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	methods := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !isCore(fn.Recv.List[0].Type) {
				continue
			}
			methods++
			ast.Inspect(fn.Type, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "workflow" || pkg.Name == "sdkinterceptor") {
						t.Errorf("%s: core.%s takes or returns %s.%s", fset.Position(fn.Pos()), fn.Name.Name, pkg.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	if methods < 20 {
		t.Errorf("found %d methods of the core: is it still called core?", methods)
	}
}

// isCore reports whether a receiver's type is core or *core.
func isCore(e ast.Expr) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "core"
}
