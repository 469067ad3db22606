package apply

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Bounds of Load.
const (
	// MaxFileBytes is the largest apply file Load reads.
	MaxFileBytes = 4 << 20
	// maxValues bounds how many YAML values one file may expand to (aliases included).
	maxValues = 200_000
	// maxDepth bounds how deeply values nest (aliases included).
	maxDepth = 64
)

// Load decodes data as an apply file without validating its content: the file must be UTF-8
// and the YAML one document whose keys are all known, exactly as written (an unknown key or
// one in another case is a problem, as with yaml's KnownFields), each given once per mapping
// (schemas, arguments and headers included), and whose values have the right shape. The error, when not nil, is Problems listing every
// problem found, each with its path. Load never panics, whatever data holds.
func Load(data []byte) (*File, error) {
	f, c := load(data)
	if c.failed() {
		return f, c.result()
	}
	return f, nil
}

// load decodes data into a File, collecting problems and the line of every path.
func load(data []byte) (*File, *collector) {
	c := newCollector()
	f := &File{}
	if len(data) > MaxFileBytes {
		c.add("", "the file is larger than %d bytes", MaxFileBytes)
		return f, c
	}
	if line, ok := textLine(data); !ok {
		c.put(Problem{Message: "the file is not valid UTF-8 text (or holds a NUL character); save it as UTF-8", Line: line})
		return f, c
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			c.add("", "the file is empty: it defines no configurations and no tools")
		} else {
			c.add("", "not valid YAML: %s", yamlMessage(err))
		}
		return f, c
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		c.put(Problem{Message: "the file holds more than one YAML document (---); put everything in one", Line: next.Line})
	case !errors.Is(err, io.EOF):
		c.add("", "not valid YAML: %s", yamlMessage(err))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			c.add("", "the file is empty: it defines no configurations and no tools")
			return f, c
		}
		root = root.Content[0]
	}
	d := &decoder{c: c}
	d.value(root, reflect.ValueOf(f).Elem(), "", 0)
	if !c.failed() && len(f.Configurations) == 0 && len(f.Tools) == 0 && f.StandingApprovals == nil {
		c.add("", "the file defines no configurations and no tools")
	}
	return f, c
}

// textLine reports whether data is UTF-8 text without NUL characters and, when it is not, the
// 1-based line of the first byte that is not.
func textLine(data []byte) (int, bool) {
	line := 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && size <= 1, r == 0:
			return line, false
		case r == '\n':
			line++
		}
		data = data[size:]
	}
	return line, true
}

// yamlMessage is the parser's message without its "yaml: " prefix.
func yamlMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// decoder walks a YAML node tree into Go values, reporting every mismatch with its path.
type decoder struct {
	c       *collector
	values  int
	tooMany bool
}

// resolve follows aliases and charges the value budget; false means stop descending.
func (d *decoder) resolve(n *yaml.Node, path string, depth int) (*yaml.Node, bool) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
		depth++
	}
	d.values++
	switch {
	case n == nil:
		return nil, false
	case d.values > maxValues:
		if !d.tooMany {
			d.tooMany = true
			d.c.add(path, "the file expands to more than %d values (check the aliases)", maxValues)
		}
		return nil, false
	case depth > maxDepth:
		d.c.add(path, "nested more than %d levels deep", maxDepth)
		return nil, false
	}
	if _, seen := d.c.lines[path]; !seen {
		d.c.lines[path] = n.Line
	}
	return n, true
}

// isNull reports whether n is an explicit null (`~`, `null` or nothing), which counts as absent.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// value decodes n into v (settable), which is one of the field types of File.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, depth int) {
	n, ok := d.resolve(n, path, depth)
	if !ok || isNull(n) {
		return
	}
	switch t := v.Addr().Interface().(type) {
	case *JSON:
		var b bytes.Buffer
		if d.json(&b, n, path, depth) {
			*t = JSON(b.Bytes())
		}
		return
	case *Duration:
		d.duration(n, t, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.value(n, p.Elem(), path, depth+1)
		v.Set(p)
	case reflect.Struct:
		d.structure(n, v, path, depth)
	case reflect.Slice:
		d.list(n, v, path, depth)
	case reflect.Map:
		d.stringMap(n, v, path, depth)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.c.add(path, "must be text, not %s", kindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.c.add(path, "must be true or false")
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil || v.OverflowInt(i) {
			d.c.add(path, "must be a whole number")
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		var f float64
		tag := n.ShortTag()
		if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.c.add(path, "must be a number")
			return
		}
		v.SetFloat(f)
	default:
		d.c.add(path, "cannot be decoded")
	}
}

// structure decodes a mapping into a struct whose fields carry yaml tags; keys that name no
// field, and keys given twice, are problems.
func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		d.c.add(path, "must be a mapping (key: value), not %s", kindName(n))
		return
	}
	fields := map[string]int{}
	var known []string
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		fields[name] = i
		known = append(known, name)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(key, path)
		if !ok {
			continue
		}
		kpath := joinKey(path, name)
		if first, dup := seen[name]; dup {
			d.c.put(Problem{Path: kpath, Message: "given twice (first on line " + strconv.Itoa(first) + ")", Line: key.Line})
			continue
		}
		seen[name] = key.Line
		idx, ok := fields[name]
		if !ok {
			d.c.put(Problem{Path: kpath, Message: "unknown key (known keys: " + strings.Join(known, ", ") + ")", Line: key.Line})
			continue
		}
		d.c.lines[kpath] = key.Line
		d.value(val, v.Field(idx), kpath, depth+1)
	}
}

// key returns the text of a mapping key; a key that is not plain text is a problem.
func (d *decoder) key(key *yaml.Node, path string) (string, bool) {
	if key.Kind == yaml.ScalarNode && key.ShortTag() == "!!merge" {
		d.c.put(Problem{Path: path, Message: "merge keys (<<) are not supported; write the keys out", Line: key.Line})
		return "", false
	}
	if key.Kind != yaml.ScalarNode || key.ShortTag() == "!!null" {
		d.c.put(Problem{Path: path, Message: "every key must be text", Line: key.Line})
		return "", false
	}
	return key.Value, true
}

// list decodes a sequence into a slice.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.SequenceNode {
		d.c.add(path, "must be a list, not %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(item, s.Index(i), joinIndex(path, i), depth+1)
	}
	v.Set(s)
}

// stringMap decodes a mapping of text to text (http headers).
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		d.c.add(path, "must be a mapping (name: value), not %s", kindName(n))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, ok := d.key(n.Content[i], path)
		if !ok {
			continue
		}
		kpath := joinKey(path, name)
		if seen[name] {
			d.c.put(Problem{Path: kpath, Message: "given twice", Line: n.Content[i].Line})
			continue
		}
		seen[name] = true
		d.c.lines[kpath] = n.Content[i].Line
		elem := reflect.New(v.Type().Elem()).Elem()
		d.value(n.Content[i+1], elem, kpath, depth+1)
		m.SetMapIndex(reflect.ValueOf(name), elem)
	}
	v.Set(m)
}

// duration decodes a duration string (ParseDuration: Go's units and days).
func (d *decoder) duration(n *yaml.Node, out *Duration, path string) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.c.add(path, `must be a duration with a unit, like "10s", "1m30s" or "30d"`)
		return
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		d.c.add(path, `must be a duration with a unit, like "10s", "1m30s" or "30d"`)
		return
	}
	*out = Duration(v)
}

// kindName names the kind of n for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "a single value"
}
