package schema

import (
	"slices"
	"testing"
)

func TestPointers(t *testing.T) {
	toks := []string{"a/b", "c~d", "", "0", "ä b"}
	ptr := joinPointer(toks)
	if ptr != "/a~1b/c~0d//0/ä b" {
		t.Errorf("joinPointer = %q", ptr)
	}
	if got := splitPointer(ptr); !slices.Equal(got, toks) {
		t.Errorf("splitPointer(%q) = %q", ptr, got)
	}
	if splitPointer("") != nil || joinPointer(nil) != "" {
		t.Error("the root pointer is not empty")
	}
	if got := libraryPointer("/a~1b/c~0d/%C3%A4%20b/100%25"); !slices.Equal(got, []string{"a/b", "c~d", "ä b", "100%"}) {
		t.Errorf("libraryPointer = %q", got)
	}
	for tok, want := range map[string]int{"0": 0, "12": 12} {
		if i, ok := arrayIndex(tok); !ok || i != want {
			t.Errorf("arrayIndex(%q) = %d, %v", tok, i, ok)
		}
	}
	for _, tok := range []string{"", "01", "-1", "a", "1e3", "9999999999"} {
		if _, ok := arrayIndex(tok); ok {
			t.Errorf("arrayIndex(%q) accepted", tok)
		}
	}
}
