package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestDecisionKindsAreRegisteredOnce: every registered kind is found by the name it stores,
// names are unique and not those of the other continuations, and a stored continuation of
// each kind decodes.
func TestDecisionKindsAreRegisteredOnce(t *testing.T) {
	seen := map[string]bool{contStart: true, contPlan: true}
	for _, k := range decisionKinds() {
		name := k.spec().name
		if seen[name] {
			t.Errorf("kind name %q is used twice", name)
		}
		seen[name] = true
		if got, ok := decisionKindNamed(name); !ok || got.spec().name != name {
			t.Errorf("decisionKindNamed(%q) = %v, %v", name, got, ok)
		}
		enc, err := continuation{Kind: name}.encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeContinuation(enc); err != nil {
			t.Errorf("a stored %s continuation does not decode: %v", name, err)
		}
	}
	if _, err := decodeContinuation(`{"kind":"telepathy"}`); err == nil {
		t.Error("an unknown continuation kind decodes")
	}
}

// TestSharedDecisionStepsNameNoKind: decision.go, the steps every decision shares, names no
// kind and no kind's status, so a new kind adds a type, not a branch.
func TestSharedDecisionStepsNameNoKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "decision.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{"contApproval": true, "contInput": true, "StatusWaitingApproval": true, "StatusWaitingInput": true,
		"ApprovalDecision": true, "InputSubmission": true}
	ast.Inspect(f, func(n ast.Node) bool {
		if fn, ok := n.(*ast.FuncDecl); ok && fn.Name.Name == "decisionKinds" {
			return false
		}
		if id, ok := n.(*ast.Ident); ok {
			if forbidden[id.Name] {
				t.Errorf("decision.go names %s outside the registration", id.Name)
			}
		}
		return true
	})
}
