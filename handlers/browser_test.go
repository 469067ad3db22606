package handlers

import (
	"testing"

	"runsdesk/runtime"
)

func TestBrowserSignIn(t *testing.T) {
	app := newTestApp(t, appOptions{})
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	if got := b.text(`[data-testid="signed-in-user"]`); got != testUsers[runtime.RoleReviewer] {
		t.Errorf("signed in as %q, want %q", got, testUsers[runtime.RoleReviewer])
	}
	if got := b.text(`[data-testid="signed-in-role"]`); got != "Reviewer" {
		t.Errorf("role %q", got)
	}
}
