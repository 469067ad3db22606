package db

import (
	"testing"
	"unsafe"
)

// TestStateTextsShareOnlyEqualTexts: a run's state read again with the same text comes back as
// the string held for it; a changed text, and another run's, come back as themselves.
func TestStateTextsShareOnlyEqualTexts(t *testing.T) {
	st := newStateTexts()
	a := st.text(1, []byte(`{"state":"a"}`))
	again := st.text(1, []byte(`{"state":"a"}`))
	if again != a || unsafe.StringData(again) != unsafe.StringData(a) {
		t.Fatalf("a text read again is not the held string")
	}
	if b := st.text(1, []byte(`{"state":"b"}`)); b != `{"state":"b"}` {
		t.Fatalf("a changed text reads %q", b)
	}
	if b := st.text(1, []byte(`{"state":"c"}`)); b != `{"state":"c"}` {
		t.Fatalf("a text changed again reads %q", b)
	}
	if other := st.text(2, []byte(`{"state":"a"}`)); other != `{"state":"a"}` {
		t.Fatalf("another run's text reads %q", other)
	}
	if got := st.text(1, nil); got != "" {
		t.Fatalf("an empty state reads %q", got)
	}
}

// BenchmarkStateTextHit is one list row's state read again: one comparison of the whole
// text, no copy.
func BenchmarkStateTextHit(b *testing.B) {
	st := newStateTexts()
	raw := make([]byte, 3<<10)
	for i := range raw {
		raw[i] = byte('a' + i%26)
	}
	st.text(7, raw)
	b.ReportAllocs()
	for b.Loop() {
		st.text(7, raw)
	}
}
