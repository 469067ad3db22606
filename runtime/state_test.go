package runtime

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"runsdesk/runtime/model"
)

// pausedState encodes an input pause whose transcript holds n messages, padded so that every
// n gives a document of the same length.
func pausedState(t *testing.T, n, length int) string {
	t.Helper()
	name := "ask_city"
	msgs := make([]model.Message, n)
	for i := range msgs {
		msgs[i] = model.Message{Role: "user", Content: "x"}
	}
	st := SuspendedState{Messages: msgs, PauseState: PauseState{
		Iterations: 2, PromptTokens: 10, CompletionTokens: 3, AllowedToolNames: []string{name},
		PendingCalls:  []PendingCall{{ID: "c1", Type: "function", Function: PendingFunction{Name: name, Arguments: json.RawMessage(`{"hint":"north"}`)}}},
		CallPreviews:  []CallPreview{{Index: 0, Tool: name, Lines: []string{"asks"}}},
		InputToolName: &name, InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`),
	}}
	raw, err := st.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if pad := length - len(raw); pad > 0 {
		msgs[0].Content += strings.Repeat("x", pad)
		if raw, err = st.Encode(); err != nil {
			t.Fatal(err)
		}
	}
	if length > 0 && len(raw) != length {
		t.Fatalf("state of %d bytes, want %d", len(raw), length)
	}
	return raw
}

// TestDecodePauseReadsWhatDecodeStateReads: the pause read without the transcript equals the
// whole state's pause.
func TestDecodePauseReadsWhatDecodeStateReads(t *testing.T) {
	raw := pausedState(t, 3, 0)
	st, err := DecodeState(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodePause(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, st.PauseState) {
		t.Errorf("DecodePause = %+v, want %+v", p, st.PauseState)
	}
}

// TestDecodePauseSkipsTheTranscript: reading a pause allocates about as much for a transcript
// of 400 messages as for one message of the same size (a few allocations of slack: under -race
// sync.Pool drops items at random, so encoding/json allocates a little more now and then),
// while the whole state allocates per message.
func TestDecodePauseSkipsTheTranscript(t *testing.T) {
	many := pausedState(t, 400, 0)
	one := pausedState(t, 1, len(many))
	allocs := func(decode func(string) error, raw string) float64 {
		return testing.AllocsPerRun(20, func() {
			if err := decode(raw); err != nil {
				t.Fatal(err)
			}
		})
	}
	pause := func(raw string) error { _, err := DecodePause(raw); return err }
	whole := func(raw string) error { _, err := DecodeState(raw); return err }
	if a, b := allocs(pause, one), allocs(pause, many); b > a+5 {
		t.Errorf("DecodePause: %v allocations for one message, %v for 400", a, b)
	}
	if a, b := allocs(whole, one), allocs(whole, many); b < a+400 {
		t.Errorf("DecodeState: %v allocations for one message, %v for 400: the comparison above proves nothing", a, b)
	}
}

// FuzzSkipValue: the transcript skipper accepts exactly the JSON encoding/json accepts.
func FuzzSkipValue(f *testing.F) {
	for _, seed := range []string{`{"a":[1,-2.5e+3,true,false,null,"\u00e9\n"]}`, `[{}]`, `01`, `"\x"`, `{"a" 1}`, ` [ ] `,
		`1.`, `-`, `1e`, `"\ud800"`, "\"\t\"", `[1,]`, `{"a":1,}`, `nul`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		end := skipValue(s, skipSpace(s, 0), 0)
		got := end >= 0 && skipSpace(s, end) == len(s)
		if want := json.Valid([]byte(s)); got != want {
			t.Errorf("skipValue(%q) accepts %v, json.Valid %v", s, got, want)
		}
	})
}

// FuzzDecodePause: DecodePause reads what DecodeState reads, and refuses what it refuses
// unless the transcript is a list of objects whose fields do not fit a message.
func FuzzDecodePause(f *testing.F) {
	f.Add(pausedState(&testing.T{}, 2, 0))
	f.Add(`{"Messages":[{"role":"user"}],"pendingCalls":[{"id":"c","function":{"name":"x","arguments":{}}}]}`)
	f.Add(`{"messages":null,"mess\u0061ges":[1],"pendingCalls":[{"id":"c","function":{"name":"x","arguments":{}}}]}`)
	f.Add(`{"messages":[],"pendingCalls":[{"id":"c","function":{"name":"x","arguments":{}}}],"allowedToolNames":5} trailing`)
	f.Add(`{"inputSchema":{"type":"object"},"InputSchema" : null,"pendingCalls":[{"id":"c","function":{"name":"x","arguments":{}}}],"input\u0053chema":[1]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		st, errWhole := DecodeState(raw)
		p, errPause := DecodePause(raw)
		switch {
		case errWhole == nil && (errPause != nil || !reflect.DeepEqual(p, st.PauseState)):
			t.Errorf("%q: DecodeState reads %+v, DecodePause %+v (%v)", raw, st.PauseState, p, errPause)
		case errPause == nil && errWhole != nil && !misfitTranscript(raw):
			t.Errorf("%q: DecodePause reads what DecodeState refuses (%v)", raw, errWhole)
		case errPause != nil && !errors.Is(errPause, errCorruptState):
			t.Errorf("%q: %v does not wrap errCorruptState", raw, errPause)
		}
	})
}

// misfitTranscript reports whether raw's transcript is what DecodePause does not check: a
// message whose fields do not fit model.Message.
func misfitTranscript(raw string) bool {
	var s struct {
		Messages []model.Message `json:"messages"`
	}
	return json.NewDecoder(strings.NewReader(raw)).Decode(&s) != nil
}

// FuzzIsJSONObject: isJSONObject accepts what decodes into a non-nil map.
func FuzzIsJSONObject(f *testing.F) {
	for _, seed := range []string{`{}`, ` {"a":1} `, `null`, `[]`, `{"a":}`, `{} x`, "\t{\"a\":[{}]}\n", ``} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m map[string]json.RawMessage
		want := json.Unmarshal([]byte(s), &m) == nil && m != nil
		if got := isJSONObject(json.RawMessage(s)); got != want {
			t.Errorf("isJSONObject(%q) = %v, want %v", s, got, want)
		}
	})
}
