package handlers

import (
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

// TestHomeCountsWhatWaits: the start page counts the runs waiting for an approval and for
// input and those expiring within the hour, each linking to that view of the inbox.
func TestHomeCountsWhatWaits(t *testing.T) {
	app := newDeskApp(t)
	app.pause(runtime.RoleAdmin, "mail")
	soon := app.pause(runtime.RoleAdmin, "wipe")
	app.pause(runtime.RoleAdmin, "ask")
	later := app.pause(runtime.RoleAdmin, "ask")
	app.setDeadline(soon, time.Now().Add(20*time.Minute), "deny", false)
	app.setDeadline(later, time.Now().Add(3*time.Hour), "deny", false)
	doc := app.login(runtime.RoleReviewer).get("/").doc(t)
	for id, want := range map[string]string{"home-approval": "2", "home-input": "2", "home-soon": "1"} {
		if got := strings.TrimSpace(doc.Find(`[data-testid="` + id + `-count"]`).Text()); got != want {
			t.Errorf("%s counts %q, want %s", id, got, want)
		}
	}
	for id, want := range map[string]string{"home-approval": "/runs?kind=approval", "home-input": "/runs?kind=input", "home-soon": "/runs?deadline=soon"} {
		if got, _ := doc.Find(`[data-testid="` + id + `"]`).Attr("href"); got != want {
			t.Errorf("%s links to %q, want %s", id, got, want)
		}
	}
}
