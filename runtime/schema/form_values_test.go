package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFormValuesRoundTrip: a value rendered as form values coerces back to the same value,
// for every kind of field, and the values are what each widget shows.
func TestFormValuesRoundTrip(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{
		"name":{"type":"string"},
		"amount":{"type":"number"},
		"count":{"type":"integer"},
		"ok":{"type":"boolean"},
		"kind":{"enum":["a","b"]},
		"when":{"type":"string","format":"date-time"},
		"at":{"type":"string","format":"time"},
		"tags":{"type":"array","items":{"type":"string"}},
		"colours":{"type":"array","items":{"enum":["red","blue","green"]}},
		"address":{"type":"object","properties":{"city":{"type":"string"}}},
		"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer"}}}},
		"blob":{"oneOf":[{"type":"string"},{"type":"object"}]}
	}}`)
	raw := `{"name":"Ann <b>","amount":12.50,"count":3,"ok":true,"kind":"b","when":"2026-12-01T10:30:00Z","at":"08:15:00Z",
		"tags":["x","y"],"colours":["red","green"],"address":{"city":"Berlin"},"lines":[{"sku":"A","qty":1},{"sku":"B","qty":2}],"blob":{"k":[1,2]}}`
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var value map[string]any
	if err := dec.Decode(&value); err != nil {
		t.Fatal(err)
	}
	form := s.FormValues(value)
	for name, want := range map[string]string{"input/when": "2026-12-01T10:30", "input/at": "08:15", "input/tags": "x\ny",
		"input/ok": "true", "input/lines": "2", "input/lines/1/qty": "2", "input/address/city": "Berlin", "input/amount": "12.50"} {
		if got := form.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := form["input/colours"]; strings.Join(got, ",") != "red,green" {
		t.Errorf("colours = %q", got)
	}
	back, errs := s.CoerceAndValidate(form)
	if len(errs) > 0 {
		t.Fatalf("coerce: %v", errs)
	}
	a, _ := json.Marshal(back)
	b, _ := json.Marshal(value)
	if string(a) != string(b) {
		t.Errorf("round trip:\ngot  %s\nwant %s", a, b)
	}
	if got := s.FormValues(map[string]any{}); len(got) != 1 || got.Get("input/lines") != "0" {
		t.Errorf("empty value: %v, want only the rows count", got)
	}
}
