package api_test

import (
	"net/http"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// transcriptBody is GET /runs/{id}/transcript's answer as a client reads it.
type transcriptBody struct {
	Run      string `json:"run"`
	Privacy  string `json:"privacy"`
	Withheld string `json:"withheld"`
	Entries  []struct {
		Sequence int    `json:"sequence"`
		Kind     string `json:"kind"`
		Privacy  string `json:"privacy"`
		Content  *struct {
			System    string `json:"system"`
			Prompt    string `json:"prompt"`
			Text      string `json:"text"`
			ToolCalls []struct {
				Tool      string `json:"tool"`
				Arguments string `json:"arguments"`
			} `json:"tool_calls"`
		} `json:"content"`
	} `json:"entries"`
}

// TestRunTranscript: GET /runs/{id}/transcript (scope read) lists a run's steps with what they
// said under privacy redacted (the prompt's e-mail address masked) for the token that started
// it; another token without the content scope gets the steps with no content and withheld
// "scope"; a metadata run says withheld "privacy"; a token without the read scope is 403 and
// an unknown run 404.
func TestRunTranscript(t *testing.T) {
	w := newWorld(t)
	for _, c := range []runtime.Configuration{
		{Identifier: "kept", Name: "kept", MaxIterations: 10, Privacy: runtime.PrivacyRedacted, SystemPrompt: "Be brief.",
			Provider: model.Settings{Kind: "scripted", Script: scripts["plain"]}},
	} {
		if _, err := w.store.UpsertConfiguration(w.ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	starter := w.createToken("ci-starter", runtime.ScopeRun, runtime.ScopeRead)
	create := func(configuration string) string {
		res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: starter,
			body: `{"configuration":"` + configuration + `","prompt":"say hello to ada@example.com"}`})
		uuid := decode[runBody](t, res, http.StatusCreated).UUID
		if ok, err := w.rt.RunOnce(w.ctx); !ok || err != nil {
			t.Fatalf("run once: %v %v", ok, err)
		}
		return uuid
	}
	get := func(uuid, token string, status int) transcriptBody {
		t.Helper()
		return decode[transcriptBody](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + uuid + "/transcript", token: token}), status)
	}
	kept := create("kept")
	got := get(kept, starter, http.StatusOK)
	if got.Run != kept || got.Privacy != "redacted" || got.Withheld != "" || len(got.Entries) != 2 {
		t.Fatalf("transcript %+v; want the run's 2 steps under redacted", got)
	}
	req, llm := got.Entries[0], got.Entries[1]
	if req.Kind != "request" || req.Content == nil || req.Content.Prompt != "say hello to [email]" || req.Content.System != "Be brief." || req.Privacy != "redacted" {
		t.Errorf("request step %+v (%+v); want the redacted prompt and the system prompt", req, req.Content)
	}
	if llm.Kind != "llm" || llm.Content == nil || llm.Content.Text != "hello" {
		t.Errorf("model step %+v (%+v); want its text", llm, llm.Content)
	}
	other := get(kept, w.tokens[runtime.ScopeRead], http.StatusOK)
	if other.Withheld != "scope" || len(other.Entries) != 2 || other.Entries[0].Content != nil {
		t.Errorf("another token: %+v; want the steps, no content, withheld scope", other)
	}
	plain := create("plain")
	if got := get(plain, starter, http.StatusOK); got.Privacy != "metadata" || got.Withheld != "privacy" || len(got.Entries) == 0 || got.Entries[0].Content != nil {
		t.Errorf("metadata run: %+v; want steps without content, withheld privacy", got)
	}
	noRead := w.createToken("ci-runner", runtime.ScopeRun)
	if res := w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + kept + "/transcript", token: noRead}); res.code != http.StatusForbidden {
		t.Errorf("a token without read: %d, want 403", res.code)
	}
	if res := w.do(request{method: http.MethodGet, path: "/api/v1/runs/00000000-0000-4000-8000-000000000000/transcript", token: starter}); res.code != http.StatusNotFound || !strings.Contains(string(res.body), "run_not_found") {
		t.Errorf("no such run: %d %s, want 404 run_not_found", res.code, res.body)
	}
}
