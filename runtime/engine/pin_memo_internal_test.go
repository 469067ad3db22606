package engine

import (
	"encoding/json"
	"hash/maphash"
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
	m := newPinMemo(newSchemaDigests())
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
	if want := definitionPin(names, a, runtime.PolicyPin{}, newSchemaDigests()).Digest(); first.digest != want {
		t.Fatalf("digest %s, want definitionPin's %s", first.digest, want)
	}
}

// TestSchemaDigestsAreSchemaDigest: the remembered digest of a text is runtime.SchemaDigest's,
// a changed text gets its own, and an entry whose text differs under the same hash is not
// trusted.
func TestSchemaDigestsAreSchemaDigest(t *testing.T) {
	d := newSchemaDigests()
	for _, text := range []string{``, `null`, `{"type":"object"}`, `{ "type" : "object" }`,
		`{"type":"object","properties":{"n":{"type":"number","maximum":1e2}}}`, `{"type":`} {
		raw := json.RawMessage(text)
		want := runtime.SchemaDigest(raw)
		if got, again := d.of(raw), d.of(raw); got != want || again != want {
			t.Errorf("%q: digests %q, %q; want %q", text, got, again, want)
		}
	}
	raw := json.RawMessage(`{"type":"string"}`)
	d.texts.Put(maphash.Bytes(d.seed, raw), textDigest{text: `{"type":"number"}`, digest: "wrong"})
	if got := d.of(raw); got != runtime.SchemaDigest(raw) {
		t.Fatalf("an entry of another text under the same hash gave %q", got)
	}
}
