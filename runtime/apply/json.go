package apply

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// jsonNumber matches a number literal JSON accepts as written.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// json writes n as compact JSON to b, keeping the order of mapping keys, and reports whether
// it could. Timestamps and binary scalars are kept as the text written; .inf, .nan, merge keys,
// non-text keys, repeated keys and custom tags are problems.
func (d *decoder) json(b *bytes.Buffer, n *yaml.Node, path string, depth int) bool {
	n, ok := d.resolve(n, path, depth)
	if !ok {
		return false
	}
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		good := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			name, ok := d.key(n.Content[i], path)
			if !ok {
				good = false
				continue
			}
			kpath := joinKey(path, name)
			if seen[name] {
				d.c.put(Problem{Path: kpath, Message: "given twice", Line: n.Content[i].Line})
				good = false
				continue
			}
			seen[name] = true
			if len(seen) > 1 {
				b.WriteByte(',')
			}
			writeString(b, name)
			b.WriteByte(':')
			good = d.json(b, n.Content[i+1], kpath, depth+1) && good
		}
		b.WriteByte('}')
		return good
	case yaml.SequenceNode:
		b.WriteByte('[')
		good := true
		for i, item := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			good = d.json(b, item, joinIndex(path, i), depth+1) && good
		}
		b.WriteByte(']')
		return good
	case yaml.ScalarNode:
		return d.scalarJSON(b, n, path)
	}
	d.c.add(path, "cannot be read as JSON")
	return false
}

// scalarJSON writes one scalar as JSON.
func (d *decoder) scalarJSON(b *bytes.Buffer, n *yaml.Node, path string) bool {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if n.Decode(&v) != nil {
			d.c.add(path, "is not a valid boolean")
			return false
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		return d.numberJSON(b, n, path)
	case "!!str", "!!timestamp", "!!binary":
		writeString(b, n.Value)
	default:
		d.c.add(path, "the YAML tag %s is not supported here", strconv.Quote(truncate(n.Tag, 40)))
		return false
	}
	return true
}

// numberJSON writes a YAML number as a JSON number: as written when JSON accepts that form,
// else converted (0x1F, 0o17, .5, +1); infinities and NaN are problems.
func (d *decoder) numberJSON(b *bytes.Buffer, n *yaml.Node, path string) bool {
	if jsonNumber.MatchString(n.Value) {
		b.WriteString(n.Value)
		return true
	}
	var i int64
	if n.ShortTag() == "!!int" && n.Decode(&i) == nil {
		b.WriteString(strconv.FormatInt(i, 10))
		return true
	}
	var f float64
	if n.Decode(&f) != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		d.c.add(path, "must be a finite number (JSON has no infinity or NaN)")
		return false
	}
	b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return true
}

// writeString writes s as a JSON string without HTML escaping.
func writeString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
}

// truncate shortens s to at most n bytes for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
