package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// outputBody is the output part of a run's JSON, with whether each key is present.
type outputBody struct {
	Output *struct {
		Text     string `json:"text"`
		Finished int64  `json:"finished"`
	} `json:"output"`
	Withheld *string `json:"output_withheld"`
	Finished *int64  `json:"finished"`
	raw      map[string]json.RawMessage
}

func (w *world) getOutput(uuid, token string) outputBody {
	w.t.Helper()
	res := w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + uuid, token: token})
	out := decode[outputBody](w.t, res, http.StatusOK)
	if err := json.Unmarshal(res.body, &out.raw); err != nil {
		w.t.Fatal(err)
	}
	return out
}

// TestRunOutput: GET /runs/{id} has "output": null while the run is not finished, then its
// text and finish time for the token that started it and for a token with the content scope;
// another token's read shows null with output_withheld "scope"; a configuration with
// keep_output false shows null with "privacy".
func TestRunOutput(t *testing.T) {
	w := newWorld(t)
	private := runtime.Configuration{Identifier: "private", Name: "private", MaxIterations: 10, NoOutput: true,
		Provider: model.Settings{Kind: "scripted", Script: scripts["plain"]}}
	if _, err := w.store.UpsertConfiguration(w.ctx, private); err != nil {
		t.Fatal(err)
	}
	starter := w.createToken("ci-starter", runtime.ScopeRun, runtime.ScopeRead)
	content := w.createToken("ci-content", runtime.ScopeRead, runtime.ScopeContent)
	create := func(configuration string) string {
		res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: starter, body: `{"configuration":"` + configuration + `","prompt":"say hello"}`})
		return decode[runBody](t, res, http.StatusCreated).UUID
	}
	run := create("plain")
	queued := w.getOutput(run, starter)
	if _, ok := queued.raw["output"]; !ok || queued.Output != nil || queued.Withheld != nil {
		t.Fatalf("queued run: %s; want output null and no output_withheld", queued.raw["output"])
	}
	if ok, err := w.rt.RunOnce(w.ctx); !ok || err != nil {
		t.Fatalf("run once: %v %v", ok, err)
	}
	for name, token := range map[string]string{"starter": starter, "content scope": content} {
		got := w.getOutput(run, token)
		if got.Output == nil || got.Output.Text != "hello" || got.Finished == nil || got.Output.Finished != *got.Finished || got.Withheld != nil {
			t.Fatalf("%s: output %+v withheld %v; want hello at the run's finish", name, got.Output, got.Withheld)
		}
	}
	if got := w.getOutput(run, w.tokens[runtime.ScopeRead]); got.Output != nil || got.Withheld == nil || *got.Withheld != "scope" {
		t.Fatalf("another token: output %+v withheld %v; want null, scope", got.Output, got.Withheld)
	}
	hidden := create("private")
	if ok, err := w.rt.RunOnce(w.ctx); !ok || err != nil {
		t.Fatalf("run once: %v %v", ok, err)
	}
	if got := w.getOutput(hidden, starter); got.Output != nil || got.Withheld == nil || *got.Withheld != "privacy" {
		t.Fatalf("keep_output false: output %+v withheld %v; want null, privacy", got.Output, got.Withheld)
	}
}
