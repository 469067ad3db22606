package handlers

import (
	"bytes"
	"encoding/gob"
	"reflect"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
)

// TestSessionCodecIsDeterministic: the same values always encode to the same bytes (gob of a
// map does not), decode back unchanged, and sessions stored by scs.GobCodec still decode.
func TestSessionCodecIsDeterministic(t *testing.T) {
	t.Parallel()
	deadline := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	values := map[string]any{sessionUID: int64(7), sessionEpoch: int64(3), sessionCSRF: "tok",
		"list": []string{"one", "two"}, "a": "x", "b": "y", "c": "z"}
	first, err := sessionCodec{}.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		again, err := sessionCodec{}.Encode(deadline, values)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(first) {
			t.Fatal("the same session encoded to different bytes")
		}
	}
	gotDeadline, got, err := sessionCodec{}.Decode(first)
	if err != nil || !gotDeadline.Equal(deadline) || !reflect.DeepEqual(got, values) {
		t.Fatalf("round trip: %v %v %v, want %v %v", gotDeadline, got, err, deadline, values)
	}
	old, err := scs.GobCodec{}.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	if gotDeadline, got, err := (sessionCodec{}).Decode(old); err != nil || !gotDeadline.Equal(deadline) || !reflect.DeepEqual(got, values) {
		t.Fatalf("a session stored by scs.GobCodec: %v %v %v", gotDeadline, got, err)
	}
	if _, _, err := (sessionCodec{}).Decode([]byte("not gob")); err == nil {
		t.Fatal("garbage decoded without an error")
	}
}

// TestSessionCodecCompact: runsdesk's own sessions (int64 and string values) use the compact
// format, round-trip through it, and the gob sessions stored before it still decode; compact
// bytes that do not parse are refused.
func TestSessionCodecCompact(t *testing.T) {
	t.Parallel()
	deadline := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	values := map[string]any{sessionUID: int64(7), sessionEpoch: int64(-3), sessionCSRF: "tok", "": ""}
	b, err := sessionCodec{}.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(sessionMagic)) {
		t.Fatalf("a session of int64 and string values was not stored compact: %q", b)
	}
	if gotDeadline, got, err := (sessionCodec{}).Decode(b); err != nil || !gotDeadline.Equal(deadline) || !reflect.DeepEqual(got, values) {
		t.Fatalf("compact round trip: %v %v %v, want %v %v", gotDeadline, got, err, deadline, values)
	}
	var old bytes.Buffer
	rec := sessionRecord{Deadline: deadline, Values: []sessionValue{{sessionCSRF, "tok"}, {sessionUID, int64(7)}}}
	if err := gob.NewEncoder(&old).Encode(&rec); err != nil {
		t.Fatal(err)
	}
	if gotDeadline, got, err := (sessionCodec{}).Decode(old.Bytes()); err != nil || !gotDeadline.Equal(deadline) ||
		!reflect.DeepEqual(got, map[string]any{sessionCSRF: "tok", sessionUID: int64(7)}) {
		t.Fatalf("a gob session stored before the compact format: %v %v %v", gotDeadline, got, err)
	}
	for name, corrupt := range map[string][]byte{
		"no deadline":       []byte(sessionMagic + "\x00\x00"),
		"truncated int":     append(b[:len(sessionMagic)+8:len(sessionMagic)+8], "\x01ki\x00\x00"...),
		"unknown type":      append(b[:len(sessionMagic)+8:len(sessionMagic)+8], "\x01kx"...),
		"string too long":   append(b[:len(sessionMagic)+8:len(sessionMagic)+8], "\x01ks\x09abc"...),
		"key without value": append(b[:len(sessionMagic)+8:len(sessionMagic)+8], "\x01k"...),
		"duplicate key":     append(b[:len(sessionMagic)+8:len(sessionMagic)+8], "\x01ks\x01a\x01ks\x01b"...),
	} {
		if _, _, err := (sessionCodec{}).Decode(corrupt); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

// FuzzSessionCodec: no stored bytes make Decode panic, and whatever decodes encodes again to
// bytes that decode to the same session.
func FuzzSessionCodec(f *testing.F) {
	deadline := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, values := range []map[string]any{
		{sessionUID: int64(7), sessionEpoch: int64(3), sessionCSRF: "tok"},
		{"list": []string{"one"}},
		{},
	} {
		b, err := sessionCodec{}.Encode(deadline, values)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(sessionMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, values, err := sessionCodec{}.Decode(b)
		if err != nil {
			return
		}
		again, err := sessionCodec{}.Encode(d, values)
		if err != nil {
			return
		}
		d2, values2, err := sessionCodec{}.Decode(again)
		if err != nil || !d2.Equal(d) || !reflect.DeepEqual(values2, values) {
			t.Fatalf("re-encoded session decodes to %v %v %v, want %v %v", d2, values2, err, d, values)
		}
	})
}

func BenchmarkSessionCodec(b *testing.B) {
	deadline := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	values := map[string]any{sessionUID: int64(7), sessionEpoch: int64(3), sessionCSRF: "a-43-character-csrf-token-like-the-real-one"}
	for b.Loop() {
		enc, err := sessionCodec{}.Encode(deadline, values)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := (sessionCodec{}).Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
