package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The --format choices of the list commands; the audit list also writes CSV and JSON Lines.
var (
	listFormats  = []string{"table", "json"}
	auditFormats = []string{"table", "json", "csv", "jsonl"}
)

// field is one field of a listing of T: its table header (empty: not in the table), its key
// in JSON and CSV (empty: only in the table), its table cell, and its JSON value (nil func:
// the cell).
type field[T any] struct {
	header string
	key    string
	cell   func(T) string
	value  func(T) any
}

// listing is how a list command prints its items: what they are called, for an empty table
// (nothing), and their fields.
type listing[T any] struct {
	noun   string
	fields []field[T]
}

// printList writes items to c's stdout in format and returns command name's exit code.
func printList[T any](c *cli, name, format string, l listing[T], items []T) int {
	if err := l.write(c.stdout, format, items); err != nil {
		return c.failf(name, "%v", err)
	}
	return exitOK
}

// write prints items in format: "table" an aligned table under the headers (nothing when there
// are none), "json" one array of objects, "csv" a header row of the keys then one row per
// item, "jsonl" one object per line. Objects hold every field in order, RFC 3339 times and
// null for what is unset; CSV cells are those values as text, empty for null.
func (l listing[T]) write(w io.Writer, format string, items []T) error {
	switch format {
	case "json":
		var b bytes.Buffer
		b.WriteByte('[')
		for i, item := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := l.object(&b, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		var out bytes.Buffer
		if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
		_, err := out.WriteTo(w)
		return err
	case "jsonl":
		var b bytes.Buffer
		for _, item := range items {
			if err := l.object(&b, item); err != nil {
				return err
			}
			b.WriteByte('\n')
		}
		_, err := b.WriteTo(w)
		return err
	case "csv":
		cw := csv.NewWriter(w)
		var keys []string
		for _, f := range l.fields {
			if f.key != "" {
				keys = append(keys, f.key)
			}
		}
		_ = cw.Write(keys)
		for _, item := range items {
			var row []string
			for _, f := range l.fields {
				if f.key != "" {
					row = append(row, csvCell(f.json(item)))
				}
			}
			_ = cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	}
	if len(items) == 0 {
		return nothing(w, l.noun)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var headers []string
	for _, f := range l.fields {
		if f.header != "" {
			headers = append(headers, f.header)
		}
	}
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, item := range items {
		var cells []string
		for _, f := range l.fields {
			if f.header != "" {
				cells = append(cells, f.cell(item))
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// nothing is what every list command prints when it has nothing to list: "No users.".
func nothing(w io.Writer, noun string) error {
	_, err := fmt.Fprintf(w, "No %s.\n", noun)
	return err
}

// object appends item as one JSON object of its fields, in order.
func (l listing[T]) object(b *bytes.Buffer, item T) error {
	b.WriteByte('{')
	first := true
	for _, f := range l.fields {
		if f.key == "" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(f.json(item))
		if err != nil {
			return fmt.Errorf("%s: %w", f.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return nil
}

// json is the field's JSON value of item.
func (f field[T]) json(item T) any {
	if f.value == nil {
		return f.cell(item)
	}
	return f.value(item)
}

// csvCell is a JSON value as a CSV cell: text as it is, lists joined by commas, null empty.
func csvCell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	}
	return fmt.Sprint(v)
}

// jsonTime is unix seconds as an RFC 3339 time in UTC, or nil (null) for 0.
func jsonTime(unix int64) any {
	if unix == 0 {
		return nil
	}
	return time.Unix(unix, 0).UTC().Format(time.RFC3339)
}

// orNull is s, or nil (null) when it is empty.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}
