package schema

import (
	"net/url"
	"strconv"
	"strings"
)

// MaxRows bounds the rows of one rows field: a posted count above it reads as MaxRows, and
// EditRows adds no row beyond it.
const MaxRows = 100

// RowsActionAdd and RowsActionRemove are the verbs of a rows action (see EditRows).
const (
	RowsActionAdd    = "add"
	RowsActionRemove = "remove"
)

// msgRowCount is the error of a rows field whose posted count is not a number.
const msgRowCount = "The rows of this list could not be read."

// Row returns row i of a rows field: the i-th default row, or Item beyond the defaults, with
// every pointer and form name placed under f.Pointer + "/" + i and the label numbered
// ("Item 2"). The result is a fresh copy.
func (f Field) Row(i int) Field {
	var r Field
	switch {
	case i < len(f.DefaultRows):
		r = f.DefaultRows[i]
	case f.Item != nil:
		r = *f.Item
	}
	r.Label += " " + strconv.Itoa(i+1)
	r.placeUnder(f.Pointer + "/" + strconv.Itoa(i))
	return r
}

// placeUnder prefixes the pointer and form name of f and its children with base.
func (f *Field) placeUnder(base string) {
	f.Pointer = base + f.Pointer
	f.FormName = "input" + f.Pointer
	f.Children = append([]Field(nil), f.Children...)
	for i := range f.Children {
		f.Children[i].placeUnder(base)
	}
}

// at returns a copy of a row template placed under base, as Field.Row places its Field.
func (n *node) at(base string) *node {
	c := *n
	c.field.Pointer = base + n.field.Pointer
	c.field.FormName = "input" + c.field.Pointer
	c.children = make([]*node, len(n.children))
	for i, child := range n.children {
		c.children[i] = child.at(base)
	}
	return &c
}

// RowCount reads the posted number of rows of a rows field: "" is 0, a count above MaxRows
// is MaxRows; ok is false for anything but a whole number.
func RowCount(posted string) (n int, ok bool) {
	posted = strings.TrimSpace(posted)
	if posted == "" {
		return 0, true
	}
	n, err := strconv.Atoi(posted)
	if err != nil || n < 0 {
		return 0, false
	}
	return min(n, MaxRows), true
}

// coerceRows reads a rows field: every row, as an object, in row order (a row left empty is
// an empty object, so its required fields say so). No rows omits the field.
func coerceRows(n *node, form url.Values, errs *[]FieldError) (value any, present, entered bool) {
	count, ok := RowCount(form.Get(n.field.FormName))
	if !ok {
		*errs = append(*errs, FieldError{Pointer: n.field.Pointer, Message: msgRowCount})
		return nil, false, true
	}
	if count == 0 {
		return nil, false, false
	}
	items := make([]any, 0, count)
	for i := range count {
		v, _, e := coerceNode(n.item.at(n.field.Pointer+"/"+strconv.Itoa(i)), form, errs)
		if v == nil {
			v = map[string]any{}
		}
		items = append(items, v)
		entered = entered || e
	}
	return items, true, entered
}

// EditRows applies a rows action, as the form's "Add another" and "Remove" buttons post it,
// to a posted form and returns the form to show next: "add <pointer of a rows field>" adds
// an empty row at the end (none beyond MaxRows); "remove <pointer of a row>" removes that
// row and moves the values of the rows after it up by one. Every other value is kept. ok is
// false when the action cannot be read or names no rows field of the schema.
func (s *Schema) EditRows(form url.Values, action string) (url.Values, bool) {
	verb, target, _ := strings.Cut(action, " ")
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	switch verb {
	case RowsActionAdd:
		n, ok := s.resolve(target)
		if !ok || n.field.Kind != KindRows {
			return nil, false
		}
		count, _ := RowCount(form.Get("input" + target))
		out.Set("input"+target, strconv.Itoa(min(count+1, MaxRows)))
		return out, true
	case RowsActionRemove:
		cut := strings.LastIndexByte(target, '/')
		if cut < 0 {
			return nil, false
		}
		list, idxTok := target[:cut], target[cut+1:]
		n, ok := s.resolve(list)
		idx, isIndex := arrayIndex(idxTok)
		count, _ := RowCount(form.Get("input" + list))
		if !ok || n.field.Kind != KindRows || !isIndex || idx >= count {
			return nil, false
		}
		prefix := "input" + list + "/"
		moved := url.Values{}
		for k, v := range form {
			rest, under := strings.CutPrefix(k, prefix)
			if !under {
				continue
			}
			tok, tail, deeper := strings.Cut(rest, "/")
			j, isRow := arrayIndex(tok)
			if !isRow || j < idx {
				continue
			}
			delete(out, k)
			if j > idx && deeper {
				moved[prefix+strconv.Itoa(j-1)+"/"+tail] = append([]string(nil), v...)
			}
		}
		for k, v := range moved {
			out[k] = v
		}
		out.Set("input"+list, strconv.Itoa(count-1))
		return out, true
	}
	return nil, false
}

// resolve finds the node of the field at ptr, a pointer as the form names it (through rows,
// "/list/2/name"); ok is false when no field is there.
func (s *Schema) resolve(ptr string) (*node, bool) {
	if n, ok := s.byPtr[ptr]; ok {
		return n, true
	}
	toks := splitPointer(ptr)
	if joinPointer(toks) != ptr {
		return nil, false
	}
	for i := len(toks) - 1; i > 0; i-- {
		n, ok := s.byPtr[joinPointer(toks[:i])]
		if !ok {
			continue
		}
		n, rest := n.within(toks[i:])
		return n, len(rest) == 0
	}
	return nil, false
}

// within descends from n through object properties and row indexes as far as toks lead to
// a field, and returns that field's node and the tokens left over.
func (n *node) within(toks []string) (*node, []string) {
	for len(toks) > 0 {
		switch n.field.Kind {
		case KindRows:
			if _, ok := arrayIndex(toks[0]); !ok || n.item == nil {
				return n, toks
			}
			n = n.item
		case KindObject:
			var next *node
			for _, c := range n.children {
				if c.field.Name == toks[0] {
					next = c
				}
			}
			if next == nil {
				return n, toks
			}
			n = next
		default:
			return n, toks
		}
		toks = toks[1:]
	}
	return n, nil
}
