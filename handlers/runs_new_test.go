package handlers

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime"
)

func TestStartARun(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	rita := app.login(runtime.RoleReviewer)
	page := rita.get("/runs/new")
	doc := page.doc(t)
	if page.status != http.StatusOK || doc.Find(`#run-configuration option[value="mail"]`).Text() != "Mail assistant (mail)" {
		t.Fatalf("start page: %d, configuration options %q", page.status, doc.Find(`#run-configuration option`).Text())
	}

	for _, tc := range []struct {
		name, configuration, prompt string
		errs                        []string
	}{
		{"nothing", "", "", []string{"run-configuration-error", "run-prompt-error"}},
		{"unknown configuration", "nope", "keep <this>", []string{"run-configuration-error"}},
		{"blank prompt", "mail", "   ", []string{"run-prompt-error"}},
		{"long prompt", "mail", strings.Repeat("p", runtime.MaxPromptBytes+1), []string{"run-prompt-error"}},
	} {
		res := rita.postForm("/runs", url.Values{"_csrf": {rita.token()}, "configuration": {tc.configuration}, "prompt": {tc.prompt}})
		doc := res.doc(t)
		if res.status != http.StatusUnprocessableEntity || doc.Find(`[data-testid="error-summary"]`).Length() != 1 {
			t.Errorf("%s: %d, want 422 with an error summary", tc.name, res.status)
		}
		for _, id := range tc.errs {
			if doc.Find(`#`+id).Length() != 1 {
				t.Errorf("%s: no %s", tc.name, id)
			}
		}
		if got := doc.Find(`#run-prompt`).Text(); got != tc.prompt {
			t.Errorf("%s: prompt not kept (%d bytes, want %d)", tc.name, len(got), len(tc.prompt))
		}
		if tc.configuration == "mail" && doc.Find(`#run-configuration option[selected]`).AttrOr("value", "") != "mail" {
			t.Errorf("%s: configuration not kept", tc.name)
		}
	}

	res := rita.postForm("/runs", url.Values{"_csrf": {rita.token()}, "configuration": {"plain"}, "prompt": {"say hello"}})
	loc := res.header.Get("Location")
	if res.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/") || !isRunID(strings.TrimPrefix(loc, "/runs/")) {
		t.Fatalf("start: %d Location %q, want 303 to the run", res.status, loc)
	}
	uuid := strings.TrimPrefix(loc, "/runs/")
	run := app.row(uuid)
	if run.Status != runtime.StatusQueued || run.BeUser != app.uids[runtime.RoleReviewer] || run.ConfigurationIdentifier != "plain" {
		t.Errorf("new run %+v", run)
	}
	follow := rita.get(loc)
	if !strings.Contains(follow.doc(t).Find(`[data-testid="flash"]`).Text(), "Run started") || follow.doc(t).Find(`[data-live]`).Length() != 1 {
		t.Error("the new run's page has no flash or is not live")
	}
	if acts := app.auditActions(); !slices.Contains(acts, "run_start/success") {
		t.Errorf("audit %v lacks the start", acts)
	}
	if res := app.login(runtime.RoleSupport).get("/runs/new"); res.status != http.StatusForbidden {
		t.Errorf("support's start page: %d, want 403", res.status)
	}
}

// TestStartOffersNoExternalConfiguration: a configuration of kind: external runs no model, so
// the start page does not offer it and a form naming it is re-rendered with its error.
func TestStartOffersNoExternalConfiguration(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ext := runtime.Configuration{Identifier: "agent-approvals", Name: "Approvals for agents", MaxIterations: 1,
		Privacy: runtime.PrivacyMetadata, SupportSees: runtime.PrivacyRedacted, External: &runtime.ExternalPolicy{Callers: []string{"ci"}}}
	if _, err := app.store.UpsertConfiguration(context.Background(), ext); err != nil {
		t.Fatal(err)
	}
	rita := app.login(runtime.RoleReviewer)
	if page := rita.get("/runs/new"); page.doc(t).Find(`#run-configuration option[value="agent-approvals"]`).Length() != 0 {
		t.Error("the start page offers the external configuration")
	}
	res := rita.postForm("/runs", url.Values{"_csrf": {rita.token()}, "configuration": {"agent-approvals"}, "prompt": {"say hello"}})
	if doc := res.doc(t); res.status != http.StatusUnprocessableEntity || doc.Find(`#run-configuration-error`).Length() != 1 || doc.Find(`#run-prompt`).Text() != "say hello" {
		t.Errorf("starting the external configuration: %d, want 422 with the configuration's error and the prompt kept", res.status)
	}
}
