package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeValue([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return string(b)
}

// The examples of RFC 6902 appendix A that succeed, and a few more.
func TestApply(t *testing.T) {
	cases := []struct{ name, doc, patch, want string }{
		{"add member", `{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`, `{"baz":"qux","foo":"bar"}`},
		{"add element", `{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`, `{"foo":["bar","qux","baz"]}`},
		{"remove member", `{"baz":"qux","foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`, `{"foo":"bar"}`},
		{"remove element", `{"foo":["bar","qux","baz"]}`, `[{"op":"remove","path":"/foo/1"}]`, `{"foo":["bar","baz"]}`},
		{"replace", `{"baz":"qux","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`, `{"baz":"boo","foo":"bar"}`},
		{"move member", `{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}`, `[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]`, `{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}`},
		{"move element", `{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`, `{"foo":["all","cows","eat","grass"]}`},
		{"test ok", `{"baz":"qux","foo":["a",2,"c"]}`, `[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]`, `{"baz":"qux","foo":["a",2,"c"]}`},
		{"add nested", `{"foo":"bar"}`, `[{"op":"add","path":"/child","value":{"grandchild":{}}}]`, `{"child":{"grandchild":{}},"foo":"bar"}`},
		{"ignore unknown members", `{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux","xyz":123}]`, `{"baz":"qux","foo":"bar"}`},
		{"add to array end", `{"foo":["bar"]}`, `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`, `{"foo":["bar",["abc","def"]]}`},
		{"escaped tokens", `{"a/b":1,"m~n":2}`, `[{"op":"replace","path":"/a~1b","value":3},{"op":"remove","path":"/m~0n"}]`, `{"a/b":3}`},
		{"null value", `{"a":1}`, `[{"op":"replace","path":"/a","value":null}]`, `{"a":null}`},
		{"copy", `{"a":{"b":1}}`, `[{"op":"copy","from":"/a","path":"/c"},{"op":"replace","path":"/c/b","value":2}]`, `{"a":{"b":1},"c":{"b":2}}`},
		{"replace root", `{"a":1}`, `[{"op":"replace","path":"","value":{"b":2}}]`, `{"b":2}`},
		{"numbers by value", `{"n":1}`, `[{"op":"test","path":"/n","value":1.0}]`, `{"n":1}`},
		{"exact digits kept", `{"n":1}`, `[{"op":"replace","path":"/n","value":12345678901234567890.5}]`, `{"n":12345678901234567890.5}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Decode([]byte(c.patch))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			doc := decode(t, c.doc)
			before := encode(t, doc)
			got, err := Apply(doc, p)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if g := encode(t, got); g != c.want {
				t.Errorf("got %s, want %s", g, c.want)
			}
			if encode(t, doc) != before {
				t.Errorf("Apply changed its input: %s, was %s", encode(t, doc), before)
			}
		})
	}
}

func TestApplyRefuses(t *testing.T) {
	cases := []struct{ name, doc, patch string }{
		{"missing member", `{"foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`},
		{"index out of range", `{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/3","value":"x"}]`},
		{"leading zero", `{"foo":["bar","baz"]}`, `[{"op":"replace","path":"/foo/01","value":"x"}]`},
		{"failed test", `{"baz":"qux"}`, `[{"op":"test","path":"/baz","value":"bar"}]`},
		{"test number vs string", `{"n":"10"}`, `[{"op":"test","path":"/n","value":10}]`},
		{"missing parent", `{"foo":"bar"}`, `[{"op":"add","path":"/baz/bat","value":"qux"}]`},
		{"move into child", `{"a":{"b":1}}`, `[{"op":"move","from":"/a","path":"/a/b/c"}]`},
		{"remove root", `{"a":1}`, `[{"op":"remove","path":""}]`},
		{"replace missing", `{"a":1}`, `[{"op":"replace","path":"/b","value":1}]`},
		{"second op fails, first undone", `{"a":1}`, `[{"op":"replace","path":"/a","value":2},{"op":"remove","path":"/zz"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Decode([]byte(c.patch))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			doc := decode(t, c.doc)
			before := encode(t, doc)
			_, err = Apply(doc, p)
			var pe *Error
			if !errors.As(err, &pe) || pe.Index < 0 {
				t.Fatalf("got %v, want an *Error naming an operation", err)
			}
			if encode(t, doc) != before {
				t.Errorf("a failed Apply changed its input")
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	cases := []struct {
		name, patch string
		index       int
	}{
		{"not an array", `{"op":"add"}`, -1},
		{"null", `null`, -1},
		{"not an object", `[1]`, 0},
		{"no op", `[{"path":"/a"}]`, 0},
		{"unknown op", `[{"op":"merge","path":"/a"}]`, 0},
		{"no path", `[{"op":"remove"}]`, 0},
		{"path not a string", `[{"op":"remove","path":1}]`, 0},
		{"path without slash", `[{"op":"remove","path":"a"}]`, 0},
		{"bad escape", `[{"op":"remove","path":"/a~2"}]`, 0},
		{"no value", `[{"op":"remove","path":"/a"},{"op":"add","path":"/a"}]`, 1},
		{"no from", `[{"op":"move","path":"/a"}]`, 0},
		{"bad from", `[{"op":"copy","from":"x","path":"/a"}]`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.patch))
			var pe *Error
			if !errors.As(err, &pe) || pe.Index != c.index {
				t.Fatalf("got %v, want an *Error at index %d", err, c.index)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	a := decode(t, `{"amount":10,"order_id":"A1","note":"x","lines":[{"qty":1},{"qty":2}],"tags":["a"]}`)
	b := decode(t, `{"amount":12.5,"order_id":"A1","lines":[{"qty":1},{"qty":3}],"tags":["a","b"],"reason":"typo"}`)
	p := Diff(a, b)
	want := `[{"op":"remove","path":"/note"},{"op":"replace","path":"/amount","value":12.5},{"op":"replace","path":"/lines/1/qty","value":3},{"op":"add","path":"/reason","value":"typo"},{"op":"replace","path":"/tags","value":["a","b"]}]`
	if got := encode(t, p); got != want {
		t.Errorf("Diff = %s\nwant %s", got, want)
	}
	if got := p.Paths(); !slices.Equal(got, []string{"/note", "/amount", "/lines/1/qty", "/reason", "/tags"}) {
		t.Errorf("Paths = %v", got)
	}
	out, err := Apply(a, p)
	if err != nil || !Equal(out, b) {
		t.Errorf("Apply(Diff) = %v, %v; want b", encode(t, out), err)
	}
	if d := Diff(a, a); len(d) != 0 {
		t.Errorf("Diff of equal values = %v, want empty", d)
	}
}

// FuzzApply: Decode and Apply never panic; a patch that applies leaves its input unchanged,
// yields JSON, and Diff from the input to the result applies to give the result again.
func FuzzApply(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2]}`), []byte(`[{"op":"add","path":"/b/-","value":3},{"op":"move","from":"/a","path":"/c"}]`))
	f.Add([]byte(`{"a":{"b":{"c":[]}}}`), []byte(`[{"op":"copy","from":"/a/b","path":"/a/b/c/0"},{"op":"test","path":"/a/b/c/0/c","value":[]}]`))
	f.Add([]byte(`[1,2,3]`), []byte(`[{"op":"remove","path":"/1"},{"op":"replace","path":"","value":null}]`))
	f.Add([]byte(`{"~":{"/":1}}`), []byte(`[{"op":"move","from":"/~0/~1","path":"/x"}]`))
	f.Fuzz(func(t *testing.T, docRaw, patchRaw []byte) {
		doc, err := decodeValue(docRaw)
		if err != nil {
			return
		}
		p, err := Decode(patchRaw)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Decode error %T is not *Error", err)
			}
			return
		}
		before, _ := json.Marshal(doc)
		out, err := Apply(doc, p)
		if after, _ := json.Marshal(doc); !bytes.Equal(before, after) {
			t.Fatalf("Apply changed its input")
		}
		if err != nil {
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
		back, err := Apply(doc, Diff(doc, out))
		if err != nil || !Equal(back, out) {
			t.Fatalf("Diff does not reproduce the result: %v", err)
		}
		enc, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("patch does not encode: %v", err)
		}
		if _, err := Decode(enc); err != nil {
			t.Fatalf("encoded patch does not decode: %v", err)
		}
	})
}

// TestApplyWithinCopyBomb: copies of the whole document doubling it are refused at the bound,
// with no more allocated than a few times the bound (unbounded, 16 doublings of 1 KiB are 64 MiB).
func TestApplyWithinCopyBomb(t *testing.T) {
	const bound = 64 << 10
	doc := map[string]any{"note": strings.Repeat("x", 1<<10)}
	var p Patch
	for i := range 16 {
		p = append(p, Op{Op: OpCopy, From: "", Path: "/k" + strconv.Itoa(i)})
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ApplyWithin(doc, p, bound)
	runtime.ReadMemStats(&after)
	var pe *Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "larger than 65536 bytes") {
		t.Fatalf("err = %v, want the bound", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*bound {
		t.Errorf("allocated %d bytes refusing the patch, want at most %d", got, 8*bound)
	}
	if out, err := ApplyWithin(doc, p[:4], bound); err != nil || Size(out, bound) > bound {
		t.Errorf("within the bound: %v", err)
	}
}

// TestSizeIsALowerBound: Size never counts more than the JSON encoding's length.
func TestSizeIsALowerBound(t *testing.T) {
	for _, raw := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null,"c":true,"d":false}],"e":"x\"y"}`, `[1.5,"",[]]`} {
		v, err := decodeValue([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if n := Size(v, 1<<20); n > len(raw) {
			t.Errorf("Size(%s) = %d, more than %d", raw, n, len(raw))
		}
	}
}

// TestDecodeMaxOps: a patch has at most 100 operations.
func TestDecodeMaxOps(t *testing.T) {
	op := `{"op":"test","path":"","value":{}}`
	if _, err := Decode([]byte("[" + strings.TrimSuffix(strings.Repeat(op+",", 100), ",") + "]")); err != nil {
		t.Fatalf("100 operations: %v", err)
	}
	_, err := Decode([]byte("[" + strings.TrimSuffix(strings.Repeat(op+",", 101), ",") + "]"))
	var pe *Error
	if !errors.As(err, &pe) || pe.Reason != "more than 100 operations" {
		t.Fatalf("101 operations: err = %v", err)
	}
}
