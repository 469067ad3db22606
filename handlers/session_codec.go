package handlers

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/alexedwards/scs/v2"
)

// sessionCodec encodes a session's values in key order, so the same session always encodes
// to the same bytes and the store can tell an unchanged session from a changed one
// (scs.GobCodec encodes the map in Go's random iteration order).
//
// A session whose values are all int64 or string (every session runsdesk writes) is stored in
// a compact format: sessionMagic, the deadline in Unix nanoseconds (8 bytes, big-endian), then
// per value its key (uvarint length, bytes), a type byte and the value (int64: 8 bytes
// big-endian; string: uvarint length, bytes). Decoding it is a few slices of the stored bytes,
// where gob compiles its decoder anew for every request. Any other session is stored with gob
// as before. Decode reads all three: the compact format, the gob format, and scs.GobCodec's
// for sessions stored before either; bytes that start with sessionMagic but do not parse are
// refused, never decoded as something else.
type sessionCodec struct{}

// sessionMagic starts a compact session; no gob stream starts with it.
const sessionMagic = "rsd\x01"

// Type bytes of the compact format.
const (
	sessionInt64  = 'i'
	sessionString = 's'
)

// errCorruptSession is a compact session that does not parse.
var errCorruptSession = errors.New("decode session: corrupt compact session")

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
	keys := slices.Sorted(maps.Keys(values))
	if b, ok := encodeCompact(deadline, keys, values); ok {
		return b, nil
	}
	rec := sessionRecord{Deadline: deadline, Values: make([]sessionValue, 0, len(values))}
	for _, k := range keys {
		rec.Values = append(rec.Values, sessionValue{Key: k, Value: values[k]})
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&rec); err != nil {
		return nil, fmt.Errorf("encode session: %w", err)
	}
	return b.Bytes(), nil
}

// encodeCompact encodes the session in the compact format; ok is false when a value is not an
// int64 or a string or the deadline is outside Unix nanoseconds.
func encodeCompact(deadline time.Time, keys []string, values map[string]any) ([]byte, bool) {
	n := deadline.UnixNano()
	if deadline.IsZero() || n == math.MinInt64 || n == math.MaxInt64 || !time.Unix(0, n).Equal(deadline) {
		return nil, false
	}
	size := len(sessionMagic) + 8
	for _, k := range keys {
		size += binary.MaxVarintLen64 + len(k) + 1 + binary.MaxVarintLen64
		if s, ok := values[k].(string); ok {
			size += len(s)
		}
	}
	b := make([]byte, 0, size)
	b = append(b, sessionMagic...)
	b = binary.BigEndian.AppendUint64(b, uint64(n))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		switch v := values[k].(type) {
		case int64:
			b = append(b, sessionInt64)
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		case string:
			b = append(b, sessionString)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		default:
			return nil, false
		}
	}
	return b, true
}

// Decode implements scs.Codec.
func (sessionCodec) Decode(b []byte) (time.Time, map[string]any, error) {
	if rest, ok := bytes.CutPrefix(b, []byte(sessionMagic)); ok {
		return decodeCompact(rest)
	}
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

// decodeCompact decodes a compact session after its magic.
func decodeCompact(b []byte) (time.Time, map[string]any, error) {
	if len(b) < 8 {
		return time.Time{}, nil, errCorruptSession
	}
	deadline := time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC()
	b = b[8:]
	values := map[string]any{}
	for len(b) > 0 {
		key, rest, ok := cutLengthPrefixed(b)
		if !ok || len(rest) == 0 {
			return time.Time{}, nil, errCorruptSession
		}
		if _, dup := values[key]; dup {
			return time.Time{}, nil, errCorruptSession
		}
		kind, rest := rest[0], rest[1:]
		switch kind {
		case sessionInt64:
			if len(rest) < 8 {
				return time.Time{}, nil, errCorruptSession
			}
			values[key] = int64(binary.BigEndian.Uint64(rest))
			b = rest[8:]
		case sessionString:
			s, after, ok := cutLengthPrefixed(rest)
			if !ok {
				return time.Time{}, nil, errCorruptSession
			}
			values[key] = s
			b = after
		default:
			return time.Time{}, nil, errCorruptSession
		}
	}
	return deadline, values, nil
}

// cutLengthPrefixed splits a uvarint-length-prefixed string off the front of b.
func cutLengthPrefixed(b []byte) (string, []byte, bool) {
	n, size := binary.Uvarint(b)
	if size <= 0 || n > uint64(len(b)-size) {
		return "", nil, false
	}
	end := size + int(n)
	return string(b[size:end]), b[end:], true
}
