package schema

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"
	"testing"
)

// TestCacheCompilesOnceAndStaysBounded: the same text yields the same compiled schema, errors
// are not cached, the least recently used entry is dropped past the size, and concurrent use
// is safe.
func TestCacheCompilesOnceAndStaysBounded(t *testing.T) {
	c := NewCache(2)
	a := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	b := json.RawMessage(`{"type":"object","properties":{"b":{"type":"string"}}}`)
	d := json.RawMessage(`{"type":"object","properties":{"d":{"type":"string"}}}`)
	s1, err := c.Compile(a)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := c.Compile(a)
	if s1 != s2 {
		t.Fatal("same text compiled twice")
	}
	if _, err := c.Compile(json.RawMessage(`{"type":"strin"}`)); err == nil {
		t.Fatal("invalid schema compiled")
	}
	c.Compile(b)
	c.Compile(a)
	c.Compile(d)
	if n := c.compiled.Len(); n != 2 {
		t.Fatalf("cache holds %d entries, want 2", n)
	}
	if s3, _ := c.Compile(a); s3 != s1 {
		t.Fatal("recently used entry was dropped")
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"f%d":{"type":"integer"}}}`, i%4))
			s, err := c.Compile(raw)
			if err != nil || len(s.Fields()) != 1 {
				t.Errorf("compile %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
}

func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(256)
	raw := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"},"note":{"type":"string"}},"required":["amount"]}`)
	if _, err := c.Compile(raw); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compile(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCacheNeverSharesAnEntryBetweenTexts: an entry held under a text's hash but compiled from
// another text (a hash collision) is not returned for it; the text is compiled on its own.
func TestCacheNeverSharesAnEntryBetweenTexts(t *testing.T) {
	c := NewCache(4)
	a := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	b := json.RawMessage(`{"type":"object","properties":{"b":{"type":"string"}}}`)
	sb, err := c.Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	c.compiled.Put(maphash.Bytes(c.seed, a), compiled{text: string(b), schema: sb})
	sa, err := c.Compile(a)
	if err != nil {
		t.Fatal(err)
	}
	if sa == sb || len(sa.Fields()) != 1 || sa.Fields()[0].Name != "a" {
		t.Fatalf("compile a with b's entry under its hash: fields %+v", sa.Fields())
	}
}
