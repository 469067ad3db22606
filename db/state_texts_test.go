package db

import (
	"hash/maphash"
	"testing"
	"unsafe"
)

// TestStateTextsShareOnlyEqualTexts: a text read again comes back as the string held for it,
// another text as itself, and a held string under the same hash never stands in for a text
// it is not.
func TestStateTextsShareOnlyEqualTexts(t *testing.T) {
	st := newStateTexts()
	a := st.text([]byte(`{"state":"a"}`))
	again := st.text([]byte(`{"state":"a"}`))
	if again != a || unsafe.StringData(again) != unsafe.StringData(a) {
		t.Fatalf("a text read again is not the held string")
	}
	if b := st.text([]byte(`{"state":"b"}`)); b != `{"state":"b"}` {
		t.Fatalf("another text reads %q", b)
	}
	raw := []byte(`{"state":"c"}`)
	st.texts.Put(maphash.Bytes(st.seed, raw), `{"state":"collides"}`)
	if got := st.text(raw); got != string(raw) {
		t.Fatalf("a colliding held text stands in: %q", got)
	}
	if got := st.text(nil); got != "" {
		t.Fatalf("an empty state reads %q", got)
	}
}

// BenchmarkStateTextHit is one list row's state read again: a hash and a comparison of the
// whole text, no copy.
func BenchmarkStateTextHit(b *testing.B) {
	st := newStateTexts()
	raw := make([]byte, 3<<10)
	for i := range raw {
		raw[i] = byte('a' + i%26)
	}
	st.text(raw)
	b.ReportAllocs()
	for b.Loop() {
		st.text(raw)
	}
}
