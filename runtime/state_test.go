package runtime

import (
	"encoding/json"
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
	st := SuspendedState{
		Messages: msgs, Iterations: 2, PromptTokens: 10, CompletionTokens: 3, AllowedToolNames: []string{name},
		PendingCalls:  []PendingCall{{ID: "c1", Type: "function", Function: PendingFunction{Name: name, Arguments: json.RawMessage(`{"hint":"north"}`)}}},
		CallPreviews:  []CallPreview{{Index: 0, Tool: name, Lines: []string{"asks"}}},
		InputToolName: &name, InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`),
	}
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
	p, err := decodePause(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 3 {
		t.Errorf("the transcript of 3 messages was checked as %d", len(p.Messages))
	}
	p.Messages = nil
	if !reflect.DeepEqual(p, st.pause()) || !reflect.DeepEqual(p.state().pause(), p) {
		t.Errorf("decodePause = %+v, want %+v", p, st.pause())
	}
}

// TestDecodePauseSkipsTheTranscript: reading a pause allocates as much for a transcript of
// 400 messages as for one message of the same size, while the whole state allocates per
// message.
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
	pause := func(raw string) error { _, err := decodePause(raw); return err }
	whole := func(raw string) error { _, err := DecodeState(raw); return err }
	if a, b := allocs(pause, one), allocs(pause, many); a != b {
		t.Errorf("decodePause: %v allocations for one message, %v for 400", a, b)
	}
	if a, b := allocs(whole, one), allocs(whole, many); b < a+400 {
		t.Errorf("DecodeState: %v allocations for one message, %v for 400: the comparison above proves nothing", a, b)
	}
}
