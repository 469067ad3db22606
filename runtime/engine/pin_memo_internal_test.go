package engine

import (
	"reflect"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// TestPinMemoComputesOncePerRegistry: the pages' pin of a pause's tools is computed once per
// registry, tools and policy (a list page used to digest every card's schemas again), and a
// rebuilt registry, other tools or another policy get their own.
func TestPinMemoComputesOncePerRegistry(t *testing.T) {
	a, err := tool.New()
	if err != nil {
		t.Fatal(err)
	}
	b, err := tool.New()
	if err != nil {
		t.Fatal(err)
	}
	m := newPinMemo()
	names := []string{"lookup", "send_mail"}
	first := m.current(names, a, runtime.PolicyPin{})
	same := func(x, y currentPin) bool {
		return reflect.ValueOf(x.pin.Tools).Pointer() == reflect.ValueOf(y.pin.Tools).Pointer()
	}
	if again := m.current(names, a, runtime.PolicyPin{}); !same(first, again) || again.digest != first.digest {
		t.Fatal("the same registry, tools and policy computed the pin again")
	}
	for name, other := range map[string]currentPin{
		"another registry": m.current(names, b, runtime.PolicyPin{}),
		"other tools":      m.current(names[:1], a, runtime.PolicyPin{}),
		"another policy":   m.current(names, a, runtime.PolicyPin{FourEyes: true}),
	} {
		if same(first, other) {
			t.Errorf("%s shared the first pin", name)
		}
	}
	if want := definitionPin(names, a, runtime.PolicyPin{}).Digest(); first.digest != want {
		t.Fatalf("digest %s, want definitionPin's %s", first.digest, want)
	}
}
