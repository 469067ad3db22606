package engine

import (
	"fmt"
	"strings"
	"testing"

	"runsdesk/runtime/model"
)

// text is a message of role whose content makes its estimate exactly tokens (at least
// messageOverhead+1, roles of at most 9 bytes).
func text(role string, tokens int) model.Message {
	n := (tokens-messageOverhead)*4 - len(role)
	return model.Message{Role: role, Content: strings.Repeat("x", n)}
}

func toolTurn(tokens int, ids ...string) model.Message {
	m := text("assistant", tokens)
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: id, Type: "function", Function: model.FunctionCall{Name: "f", Arguments: "{}"}})
	}
	m.Content = m.Content[min(len(m.Content), len(ids)*(len(ids[0])+3)):]
	return m
}

func result(tokens int, id string) model.Message {
	m := text("tool", tokens)
	m.ToolCallID = id
	m.Content = m.Content[len(id):]
	return m
}

func TestEstimateTokens(t *testing.T) {
	for _, c := range []struct {
		m    model.Message
		want int64
	}{
		{model.Message{}, 4},
		{model.Message{Role: "user"}, 5},
		{model.Message{Role: "user", Content: "a"}, 6},
		{model.Message{Role: "user", Content: "abcd"}, 6},
		{model.Message{Role: "tool", Content: "abcd", ToolCallID: "c1"}, 7},
		{model.Message{Role: "assistant", ToolCalls: []model.ToolCall{{ID: "c1", Function: model.FunctionCall{Name: "lookup", Arguments: "{}"}}}}, 9},
		{model.Message{Role: "user", Content: "ü"}, 6},
	} {
		if got := estimateTokens(c.m); got != c.want {
			t.Errorf("estimateTokens(%+v) = %d, want %d", c.m, got, c.want)
		}
	}
	if got := text("user", 10); estimateTokens(got) != 10 {
		t.Fatalf("fixture text(user, 10) estimates %d", estimateTokens(got))
	}
}

func TestFitWindow(t *testing.T) {
	sys, user := text("system", 10), text("user", 10)
	a1, r1a, r1b := toolTurn(10, "c1", "c2"), result(10, "c1"), result(10, "c2")
	a2, r2 := toolTurn(10, "c3"), result(10, "c3")
	final := text("assistant", 10)
	transcript := []model.Message{sys, user, a1, r1a, r1b, a2, r2}
	for _, c := range []struct {
		name   string
		msgs   []model.Message
		window int64
		kept   []model.Message
		drop   dropCount
		ok     bool
	}{
		{"fits", transcript, 70, transcript, dropCount{Before: 70, After: 70}, true},
		{"drops the oldest message first", transcript, 60, []model.Message{sys, a1, r1a, r1b, a2, r2},
			dropCount{Messages: 1, Before: 70, After: 60}, true},
		{"drops a tool turn with all its results, never a part", transcript, 50, []model.Message{sys, a2, r2},
			dropCount{Messages: 4, ToolCalls: 2, ToolResults: 2, Before: 70, After: 30}, true},
		{"keeps the last group", transcript, 30, []model.Message{sys, a2, r2},
			dropCount{Messages: 4, ToolCalls: 2, ToolResults: 2, Before: 70, After: 30}, true},
		{"cannot fit the last group", transcript, 29, transcript, dropCount{Before: 70, After: 70}, false},
		{"system messages stay where they are", []model.Message{sys, user, final, sys, user}, 30, []model.Message{sys, sys, user},
			dropCount{Messages: 2, Before: 50, After: 30}, true},
		{"an orphan tool result is a group of its own", []model.Message{r1a, user}, 10, []model.Message{user},
			dropCount{Messages: 1, ToolResults: 1, Before: 20, After: 10}, true},
		{"a lone prompt that does not fit", []model.Message{sys, user}, 19, []model.Message{sys, user}, dropCount{Before: 20, After: 20}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			kept, d, ok := fitWindow(c.msgs, c.window)
			if ok != c.ok || d != c.drop || fmt.Sprint(roles(kept)) != fmt.Sprint(roles(c.kept)) || len(kept) != len(c.kept) {
				t.Fatalf("fitWindow = %v %+v %v, want %v %+v %v", roles(kept), d, ok, roles(c.kept), c.drop, c.ok)
			}
			for i := range kept {
				if kept[i].ToolCallID != c.kept[i].ToolCallID || len(kept[i].ToolCalls) != len(c.kept[i].ToolCalls) {
					t.Fatalf("kept[%d] = %+v, want %+v", i, kept[i], c.kept[i])
				}
			}
		})
	}
}

func roles(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + m.ToolCallID
	}
	return out
}

// FuzzFitWindow: whatever the transcript and window, what fitWindow keeps fits the window (or
// nothing is dropped and ok is false), keeps every system message and the last group, never
// keeps a tool result whose assistant turn it dropped, and counts what it dropped.
func FuzzFitWindow(f *testing.F) {
	f.Add([]byte{1, 2, 3, 3, 2, 3, 4, 1}, uint16(40))
	f.Add([]byte{0, 1, 2, 3, 0, 4}, uint16(12))
	f.Add([]byte{3, 3, 1}, uint16(1))
	f.Fuzz(func(t *testing.T, spec []byte, window uint16) {
		msgs := make([]model.Message, 0, len(spec))
		for i, b := range spec {
			size := int(b>>3) * 3
			id := fmt.Sprintf("c%d", i)
			tag := id + ":"
			switch b % 5 {
			case 0:
				msgs = append(msgs, model.Message{Role: "system", Content: tag + strings.Repeat("s", size)})
			case 1:
				msgs = append(msgs, model.Message{Role: "user", Content: tag + strings.Repeat("u", size)})
			case 2:
				msgs = append(msgs, model.Message{Role: "assistant", Content: tag + strings.Repeat("a", size),
					ToolCalls: []model.ToolCall{{ID: id, Function: model.FunctionCall{Name: "f", Arguments: "{}"}}}})
			case 3:
				msgs = append(msgs, model.Message{Role: "tool", ToolCallID: id, Content: tag + strings.Repeat("t", size)})
			default:
				msgs = append(msgs, model.Message{Role: "assistant", Content: tag + strings.Repeat("a", size)})
			}
		}
		kept, d, ok := fitWindow(msgs, int64(window))
		if !ok {
			if len(kept) != len(msgs) || d.Messages != 0 {
				t.Fatalf("a failed fit changed the transcript: %d of %d kept, %+v", len(kept), len(msgs), d)
			}
			return
		}
		if est := estimateTranscript(kept); est > int64(window) || est != d.After || d.Before != estimateTranscript(msgs) {
			t.Fatalf("kept %d tokens, window %d, counts %+v", est, window, d)
		}
		if len(msgs)-len(kept) != d.Messages {
			t.Fatalf("dropped %d messages, counted %d", len(msgs)-len(kept), d.Messages)
		}
		groups := groupsOf(msgs)
		leader := map[int]int{}
		for _, g := range groups {
			for _, i := range g {
				leader[i] = g[0]
			}
		}
		keptAt := map[int]bool{}
		j := 0
		for i := range msgs {
			if j < len(kept) && sameMessage(kept[j], msgs[i]) {
				keptAt[i] = true
				j++
			}
		}
		if j != len(kept) {
			t.Fatal("kept is not a subsequence of the transcript")
		}
		var calls, results int
		for i, m := range msgs {
			switch {
			case m.Role == "system" && !keptAt[i]:
				t.Fatalf("system message %d dropped", i)
			case m.Role != "system" && keptAt[i] != keptAt[leader[i]]:
				t.Fatalf("message %d split from its group leader %d", i, leader[i])
			case !keptAt[i]:
				calls += len(m.ToolCalls)
				if m.Role == "tool" {
					results++
				}
			}
		}
		if len(groups) > 0 {
			for _, i := range groups[len(groups)-1] {
				if !keptAt[i] {
					t.Fatalf("last group message %d dropped", i)
				}
			}
		}
		if calls != d.ToolCalls || results != d.ToolResults {
			t.Fatalf("dropped %d calls, %d results; counted %+v", calls, results, d)
		}
	})
}

func sameMessage(a, b model.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && len(a.ToolCalls) == len(b.ToolCalls)
}
