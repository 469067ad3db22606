package handlers

import (
	"reflect"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
)

// TestSessionCodecIsDeterministic: the same values always encode to the same bytes (gob of a
// map does not), decode back unchanged, and sessions stored by scs.GobCodec still decode.
func TestSessionCodecIsDeterministic(t *testing.T) {
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
