package buildcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layerRule forbids every package under from (the path or below it) to depend on any package
// under to, directly or through other packages.
type layerRule struct {
	from, to string
	why      string
}

// layerRules are the directions the desk's packages may not depend in (tests excepted: they
// run against the real database).
var layerRules = []layerRule{
	{"runsdesk/runtime", "runsdesk/db", "the runtime reaches storage only through its Store and Catalog interfaces"},
	{"runsdesk/runtime", "runsdesk/handlers", "the runtime knows nothing of HTTP"},
	{"runsdesk/runtime", "runsdesk/views", "the runtime builds view models, never pages"},
	{"runsdesk/handlers", "runsdesk/db", "handlers reach storage only through the runtime"},
	{"runsdesk/views", "runsdesk/db", "views render what they are given"},
	{"runsdesk/runtime", "runsdesk/runtime/engine", "the vocabulary and the runtime's parts (model, tool, schema, apply, demo) run nothing; only the engine executes runs"},
	{"runsdesk/handlers", "runsdesk/runtime/engine", "handlers call the runtime through their Runtime interfaces; only the wiring builds the engine"},
	{"runsdesk/views", "runsdesk/runtime/engine", "views render read models, they do not compute them"},
	{"runsdesk/db", "runsdesk/runtime/engine", "storage implements the vocabulary's Store and Catalog and runs nothing"},
}

// goPackage is what go list says of one package.
type goPackage struct {
	ImportPath string
	Imports    []string
}

// under reports whether path is prefix or a package below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// layerViolations returns, for each rule a package of graph breaks, the chain of imports
// from the package to the forbidden one, as "a -> b -> c (why)".
func layerViolations(graph map[string][]string, rules []layerRule) []string {
	var out []string
	for _, from := range slices.Sorted(maps.Keys(graph)) {
		for _, r := range rules {
			if !under(from, r.from) {
				continue
			}
			if chain := importChain(graph, from, func(p string) bool { return under(p, r.to) }); chain != nil {
				out = append(out, strings.Join(chain, " -> ")+" ("+r.why+")")
			}
		}
	}
	return out
}

// importChain is a shortest chain of imports from start to a package that is target, or nil.
func importChain(graph map[string][]string, start string, target func(string) bool) []string {
	prev := map[string]string{start: ""}
	queue := []string{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range graph[p] {
			if _, seen := prev[q]; seen {
				continue
			}
			prev[q] = p
			if target(q) {
				var chain []string
				for at := q; at != ""; at = prev[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, q)
		}
	}
	return nil
}

// moduleImports is the import graph of the module's packages and everything they import
// (test files excluded), by `go list -deps -json`.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", "runsdesk/...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		graph[p.ImportPath] = p.Imports
	}
	if _, ok := graph["runsdesk/runtime"]; !ok {
		t.Fatal("go list did not list runsdesk/runtime")
	}
	return graph
}

// TestLayersDoNotImportUpwards: runtime (with its sub-packages) depends on none of db,
// handlers and views; handlers and views do not depend on db; only the engine itself and the
// wiring (cmd, bench) depend on runtime/engine.
func TestLayersDoNotImportUpwards(t *testing.T) {
	for _, v := range layerViolations(moduleImports(t), layerRules) {
		t.Error(v)
	}
}

// TestLayerRulesCatchIndirectImports: a forbidden dependency is found through other
// packages, sub-packages are under their parent's rule, and a package whose name merely
// starts like a layer's is not.
func TestLayerRulesCatchIndirectImports(t *testing.T) {
	graph := map[string][]string{
		"runsdesk/runtime/engine": {"fmt", "runsdesk/cache", "runsdesk/lib"},
		"runsdesk/lib":            {"runsdesk/db/dbtest"},
		"runsdesk/db/dbtest":      {"runsdesk/db"},
		"runsdesk/runtimex":       {"runsdesk/db"},
		"runsdesk/views":          {"runsdesk/runtime/schema"},
		"runsdesk/handlers":       {"runsdesk/views", "runsdesk/runtime"},
	}
	got := layerViolations(graph, layerRules)
	want := []string{"runsdesk/runtime/engine -> runsdesk/lib -> runsdesk/db/dbtest (" + layerRules[0].why + ")"}
	if !slices.Equal(got, want) {
		t.Errorf("violations %q, want %q", got, want)
	}
	graph["runsdesk/views"] = append(graph["runsdesk/views"], "runsdesk/lib")
	if got := layerViolations(graph, layerRules); len(got) != 3 {
		t.Errorf("views importing db through lib: violations %q, want the runtime's plus views' and handlers'", got)
	}
	graph["runsdesk/handlers/api"] = []string{"runsdesk/runtime/engine"}
	graph["runsdesk/runtime/tool"] = []string{"runsdesk/runtime/engine"}
	got = layerViolations(graph, layerRules)
	for _, want := range []string{
		"runsdesk/handlers/api -> runsdesk/runtime/engine (" + layerRules[6].why + ")",
		"runsdesk/runtime/tool -> runsdesk/runtime/engine (" + layerRules[5].why + ")",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("violations %q, want among them %q", got, want)
		}
	}
}
