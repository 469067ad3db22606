// Package jsonpatch reads, applies and computes JSON Patch documents (RFC 6902) over JSON
// values decoded with numbers kept as json.Number: objects are map[string]any, arrays []any.
// Apply never changes the document it is given; Diff yields a patch that Apply turns the
// first value into the second with.
package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// MaxOps bounds the operations of one patch that Decode accepts.
const MaxOps = 100

// The operations of RFC 6902.
const (
	OpAdd     = "add"
	OpRemove  = "remove"
	OpReplace = "replace"
	OpMove    = "move"
	OpCopy    = "copy"
	OpTest    = "test"
)

// Op is one operation: Path (and From, for move and copy) are JSON Pointers (RFC 6901);
// Value is set for add, replace and test (JSON null included).
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from,omitempty"`
	Value any    `json:"value,omitempty"`
}

// Patch is a sequence of operations, applied in order.
type Patch []Op

// MarshalJSON writes the operation with the members RFC 6902 defines for it (a null value
// of add, replace and test included).
func (o Op) MarshalJSON() ([]byte, error) {
	m := map[string]any{"op": o.Op, "path": o.Path}
	switch o.Op {
	case OpMove, OpCopy:
		m["from"] = o.From
	case OpAdd, OpReplace, OpTest:
		m["value"] = o.Value
	}
	return json.Marshal(m)
}

// Error is a patch that cannot be read or applied: Index is the failing operation (-1 for
// the patch as a whole) and Reason says why, naming pointers but never values.
type Error struct {
	Index  int
	Reason string
}

// Error says which operation failed and why.
func (e *Error) Error() string {
	if e.Index < 0 {
		return "json patch: " + e.Reason
	}
	return fmt.Sprintf("json patch: operation %d: %s", e.Index, e.Reason)
}

func opError(i int, format string, args ...any) *Error {
	return &Error{Index: i, Reason: fmt.Sprintf(format, args...)}
}

// Decode reads raw as a JSON Patch: an array of at most MaxOps objects, each with a known
// "op", a valid "path" and, by operation, a valid "from" or a "value". Members RFC 6902 does
// not define are ignored. Numbers in values are kept as json.Number. The error is an *Error.
func Decode(raw []byte) (Patch, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, &Error{Index: -1, Reason: "not a JSON array of operations"}
	}
	if len(items) > MaxOps {
		return nil, &Error{Index: -1, Reason: fmt.Sprintf("more than %d operations", MaxOps)}
	}
	p := make(Patch, 0, len(items))
	for i, item := range items {
		op, err := decodeOp(i, item)
		if err != nil {
			return nil, err
		}
		p = append(p, op)
	}
	return p, nil
}

func decodeOp(i int, raw json.RawMessage) (Op, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return Op{}, opError(i, "not a JSON object")
	}
	text := func(name string) (string, error) {
		var s string
		m, ok := members[name]
		if !ok {
			return "", opError(i, "%q is missing", name)
		}
		if err := json.Unmarshal(m, &s); err != nil {
			return "", opError(i, "%q must be a string", name)
		}
		return s, nil
	}
	var op Op
	var err error
	if op.Op, err = text("op"); err != nil {
		return Op{}, err
	}
	if op.Path, err = text("path"); err != nil {
		return Op{}, err
	}
	if _, err := parsePointer(op.Path); err != nil {
		return Op{}, opError(i, "path: %s", err)
	}
	switch op.Op {
	case OpRemove:
	case OpMove, OpCopy:
		if op.From, err = text("from"); err != nil {
			return Op{}, err
		}
		if _, err := parsePointer(op.From); err != nil {
			return Op{}, opError(i, "from: %s", err)
		}
	case OpAdd, OpReplace, OpTest:
		v, ok := members["value"]
		if !ok {
			return Op{}, opError(i, `"value" is missing`)
		}
		if op.Value, err = decodeValue(v); err != nil {
			return Op{}, opError(i, `"value" is not JSON`)
		}
	default:
		return Op{}, opError(i, "unknown op (use add, remove, replace, move, copy or test)")
	}
	return op, nil
}

func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// parsePointer splits a JSON Pointer into its unescaped tokens: "" is the whole document;
// any other pointer starts with "/", and "~" is followed only by "0" or "1".
func parsePointer(ptr string) ([]string, error) {
	if ptr == "" {
		return nil, nil
	}
	if ptr[0] != '/' {
		return nil, errors.New(`a pointer is "" or starts with "/"`)
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, errors.New(`"~" must be followed by 0 or 1`)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// Pointer builds a JSON Pointer from unescaped tokens.
func Pointer(toks ...string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// Apply returns doc with p applied, operation by operation; doc itself is not changed. A
// failing operation (a path that does not exist, an index out of range, a failed test, a
// move into its own child) fails the whole patch with an *Error naming it.
func Apply(doc any, p Patch) (any, error) { return ApplyWithin(doc, p, 0) }

// ApplyWithin is Apply with the document bounded: with maxBytes > 0, an operation after which
// the document would encode to more than maxBytes bytes of JSON (as far as Size counts) fails
// the patch with an *Error naming it, checked after every operation and before a copy clones,
// so a refused patch costs no more than its bound.
func ApplyWithin(doc any, p Patch, maxBytes int) (any, error) {
	out := clone(doc)
	for i, op := range p {
		if maxBytes > 0 && op.Op == OpCopy {
			if err := copyFits(out, op, maxBytes); err != nil {
				return nil, opError(i, "%s", err)
			}
		}
		var err error
		if out, err = applyOp(out, op); err != nil {
			return nil, opError(i, "%s", err)
		}
		if maxBytes > 0 && Size(out, maxBytes) > maxBytes {
			return nil, opError(i, "the arguments would be larger than %d bytes", maxBytes)
		}
	}
	return out, nil
}

// copyFits refuses a copy whose value would take doc past maxBytes, before it is cloned.
func copyFits(doc any, op Op, maxBytes int) error {
	from, err := parsePointer(op.From)
	if err != nil {
		return nil
	}
	v, err := get(doc, from)
	if err != nil {
		return nil
	}
	have := Size(doc, maxBytes)
	if have+Size(v, maxBytes-have) > maxBytes {
		return fmt.Errorf("the arguments would be larger than %d bytes", maxBytes)
	}
	return nil
}

// Size is a lower bound of the length of v encoded as JSON (strings counted unescaped), read
// no further than it takes to pass limit: once past, it returns a value above limit.
func Size(v any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n > limit {
			return
		}
		switch c := v.(type) {
		case map[string]any:
			n += 2 + max(len(c)-1, 0)
			for k, e := range c {
				n += len(k) + 3
				walk(e)
				if n > limit {
					return
				}
			}
		case []any:
			n += 2 + max(len(c)-1, 0)
			for _, e := range c {
				walk(e)
				if n > limit {
					return
				}
			}
		case string:
			n += len(c) + 2
		case json.Number:
			n += len(c)
		case float64:
			n += len(strconv.FormatFloat(c, 'g', -1, 64))
		case bool:
			n += 4
			if !c {
				n++
			}
		default:
			n += 4
		}
	}
	walk(v)
	return n
}

func applyOp(doc any, op Op) (any, error) {
	path, err := parsePointer(op.Path)
	if err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	switch op.Op {
	case OpAdd:
		return add(doc, path, clone(op.Value))
	case OpRemove:
		out, _, err := remove(doc, path)
		return out, err
	case OpReplace:
		if _, err := get(doc, path); err != nil {
			return nil, err
		}
		if len(path) == 0 {
			return clone(op.Value), nil
		}
		out, _, err := remove(doc, path)
		if err != nil {
			return nil, err
		}
		return add(out, path, clone(op.Value))
	case OpMove, OpCopy:
		from, err := parsePointer(op.From)
		if err != nil {
			return nil, fmt.Errorf("from: %w", err)
		}
		v, err := get(doc, from)
		if err != nil {
			return nil, fmt.Errorf("from: %w", err)
		}
		if op.Op == OpCopy {
			return add(doc, path, clone(v))
		}
		if op.From == op.Path {
			return doc, nil
		}
		if strings.HasPrefix(op.Path, op.From+"/") {
			return nil, errors.New("cannot move a value into one of its own children")
		}
		out, v, err := remove(doc, from)
		if err != nil {
			return nil, err
		}
		return add(out, path, v)
	case OpTest:
		v, err := get(doc, path)
		if err != nil {
			return nil, err
		}
		if !Equal(v, op.Value) {
			return nil, fmt.Errorf("test failed at %q", op.Path)
		}
		return doc, nil
	}
	return nil, fmt.Errorf("unknown op %q", op.Op)
}

// get returns the value at path.
func get(doc any, path []string) (any, error) {
	cur := doc
	for depth, tok := range path {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("%q does not exist", Pointer(path[:depth+1]...))
			}
			cur = v
		case []any:
			i, err := index(tok, len(c), false)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", Pointer(path[:depth+1]...), err)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q does not exist", Pointer(path[:depth+1]...))
		}
	}
	return cur, nil
}

// update replaces the container holding the last token of path by what f makes of it,
// returning the document; path has at least one token.
func update(doc any, path []string, f func(parent any, tok string) (any, error)) (any, error) {
	parent, err := get(doc, path[:len(path)-1])
	if err != nil {
		return nil, err
	}
	next, err := f(parent, path[len(path)-1])
	if err != nil {
		return nil, err
	}
	if len(path) == 1 {
		return next, nil
	}
	return setAt(doc, path[:len(path)-1], next), nil
}

// setAt replaces the value at path, which exists, by v.
func setAt(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	switch c := doc.(type) {
	case map[string]any:
		c[path[0]] = setAt(c[path[0]], path[1:], v)
	case []any:
		i, _ := strconv.Atoi(path[0])
		c[i] = setAt(c[i], path[1:], v)
	}
	return doc
}

func add(doc any, path []string, v any) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	return update(doc, path, func(parent any, tok string) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			c[tok] = v
			return c, nil
		case []any:
			i := len(c)
			if tok != "-" {
				var err error
				if i, err = index(tok, len(c), true); err != nil {
					return nil, fmt.Errorf("%q: %w", Pointer(path...), err)
				}
			}
			out := make([]any, 0, len(c)+1)
			out = append(append(append(out, c[:i]...), v), c[i:]...)
			return out, nil
		}
		return nil, fmt.Errorf("the parent of %q is not an object or array", Pointer(path...))
	})
}

func remove(doc any, path []string) (any, any, error) {
	if len(path) == 0 {
		return nil, nil, errors.New("cannot remove the whole document")
	}
	var removed any
	out, err := update(doc, path, func(parent any, tok string) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("%q does not exist", Pointer(path...))
			}
			removed = v
			delete(c, tok)
			return c, nil
		case []any:
			i, err := index(tok, len(c), false)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", Pointer(path...), err)
			}
			removed = c[i]
			out := make([]any, 0, len(c)-1)
			return append(append(out, c[:i]...), c[i+1:]...), nil
		}
		return nil, fmt.Errorf("%q does not exist", Pointer(path...))
	})
	return out, removed, err
}

// index reads an array index token: digits without a leading zero, below n (up to n when
// inserting).
func index(tok string, n int, inserting bool) (int, error) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, errors.New("not an array index")
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i > n || (i == n && !inserting) {
		return 0, errors.New("index out of range")
	}
	return i, nil
}

// clone deep-copies a JSON value.
func clone(v any) any {
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, e := range c {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// Equal reports whether two JSON values are equal as RFC 6902's test defines it: numbers by
// value, strings, booleans and null exactly, arrays element by element, objects member by
// member regardless of order.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if na, ok := number(a); ok {
		nb, ok := number(b)
		return ok && na.Cmp(nb) == 0
	}
	if _, ok := number(b); ok {
		return false
	}
	return a == b
}

// numberPrec is the precision numbers are compared with: exact for every literal of up to
// maxNumberDigits characters.
const (
	numberPrec      = 4096
	maxNumberDigits = 1000
)

// number reads a JSON number (json.Number or float64); a literal longer than
// maxNumberDigits is compared as text.
func number(v any) (*big.Float, bool) {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = n.String()
	case float64:
		return new(big.Float).SetPrec(numberPrec).SetFloat64(n), true
	default:
		return nil, false
	}
	if len(s) > maxNumberDigits {
		return nil, false
	}
	f, _, err := big.ParseFloat(s, 10, numberPrec, big.ToNearestEven)
	return f, err == nil
}

// Lookup returns the value at the JSON Pointer ptr of doc, and whether there is one.
func Lookup(doc any, ptr string) (any, bool) {
	path, err := parsePointer(ptr)
	if err != nil {
		return nil, false
	}
	v, err := get(doc, path)
	return v, err == nil
}

// Paths returns the distinct pointers p changes (each operation's path, and a move's from),
// in order; a test changes nothing.
func (p Patch) Paths() []string {
	seen := map[string]bool{}
	var out []string
	note := func(ptr string) {
		if !seen[ptr] {
			seen[ptr] = true
			out = append(out, ptr)
		}
	}
	for _, op := range p {
		switch op.Op {
		case OpTest:
			continue
		case OpMove:
			note(op.From)
		}
		note(op.Path)
	}
	return out
}
