package handlers

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/alexedwards/scs/v2"
)

// sessionCodec encodes a session's values with gob in key order, so the same session always
// encodes to the same bytes and the store can tell an unchanged session from a changed one
// (scs.GobCodec encodes the map in Go's random iteration order). It decodes its own format
// and, for sessions stored before it, scs.GobCodec's.
type sessionCodec struct{}

type sessionValue struct {
	Key   string
	Value any
}

type sessionRecord struct {
	Deadline time.Time
	Values   []sessionValue
}

// Encode implements scs.Codec.
func (sessionCodec) Encode(deadline time.Time, values map[string]any) ([]byte, error) {
	rec := sessionRecord{Deadline: deadline, Values: make([]sessionValue, 0, len(values))}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		rec.Values = append(rec.Values, sessionValue{Key: k, Value: values[k]})
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&rec); err != nil {
		return nil, fmt.Errorf("encode session: %w", err)
	}
	return b.Bytes(), nil
}

// Decode implements scs.Codec.
func (sessionCodec) Decode(b []byte) (time.Time, map[string]any, error) {
	var rec sessionRecord
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&rec); err != nil {
		return scs.GobCodec{}.Decode(b)
	}
	values := make(map[string]any, len(rec.Values))
	for _, v := range rec.Values {
		values[v.Key] = v.Value
	}
	return rec.Deadline, values, nil
}
