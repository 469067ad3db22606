package tool_test

import (
	"testing"

	"runsdesk/runtime/tool"
)

func TestDeclaredDefinitionIsCheckedWithoutEndpointAndNeverRuns(t *testing.T) {
	def := tool.Definition{Name: "wire_transfer", Parameters: []byte(objectParams), Effect: tool.EffectNonIdempotentWrite}
	if !def.Declared() {
		t.Fatal("a definition without http and mcp is not Declared")
	}
	if errs := tool.Check(def); errs != nil {
		t.Fatalf("Check(declared) = %v", errs)
	}
	res := execute(t, newHTTP(t, def, env(nil)), call(`{"order_id":"A-1"}`))
	if !res.IsError || res.Content != "tool wire_transfer: this tool only declares what may be asked; nothing runs it" {
		t.Errorf("result = %+v", res)
	}
	withHeader := def
	withHeader.HTTP.Headers = map[string]string{"X-Static": "v1"}
	if withHeader.Declared() || tool.Check(withHeader) == nil {
		t.Error("a definition with http headers but no URL counts as declared")
	}
}
