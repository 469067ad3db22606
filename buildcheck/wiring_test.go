package buildcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// assembly lists, by import path, the constructors of the application's parts that only
// package app calls: serve, the benchmarks and the reliability suite then run one middleware
// chain, and none of them can drift (an API without the admission gate, a server without its
// timeouts).
var assembly = map[string][]string{
	"runsdesk/handlers":           {"New", "NewSessionManager"},
	"runsdesk/handlers/api":       {"New"},
	"runsdesk/handlers/mcpserver": {"New"},
	"runsdesk/handlers/metrics":   {"New", "Readyz"},
	"runsdesk/handlers/admission": {"New"},
	"runsdesk/runtime/engine":     {"New"},
	"runsdesk/notify":             {"New"},
}

// TestOnlyAppWiresTheApplication fails when a program file outside app/ calls one of the
// assembly constructors. Tests may build parts alone to test them.
func TestOnlyAppWiresTheApplication(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range sourceFiles(t, ".go") {
		rel, err := filepath.Rel("..", path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(path, "_test.go") || filepath.Dir(filepath.ToSlash(rel)) == "app" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("parse %s: %v", path, err)
			continue
		}
		names := map[string][]string{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			funcs, ok := assembly[p]
			if !ok {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = funcs
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			for _, fn := range names[pkg.Name] {
				if sel.Sel.Name == fn {
					t.Errorf("%s: %s.%s wires a part of the application outside package app: build it with app.New (or app.NewRuntime)",
						fset.Position(call.Pos()), pkg.Name, fn)
				}
			}
			return true
		})
	}
}
