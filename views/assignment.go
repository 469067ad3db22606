package views

import (
	"strings"
	"time"
)

// AssignmentBox is a waiting run's assignment on its page: who holds it and since when ("":
// nobody), and the forms the viewer may use: take it for themself (Me, their username; Force
// when someone else holds it, which only an admin is offered), release it, and assign it to
// one of People.
type AssignmentBox struct {
	URL string
	// PresenceURL is where the page's heartbeat reports it is open ("": presence is off);
	// Others are the usernames of the others who had the page open within PresenceWindow.
	PresenceURL string
	Others      []string
	Assignee    string
	Since       time.Time
	Me          string
	CanTake     bool
	CanRelease  bool
	Force       bool
	People      []string
}

// PresenceWindow is how recently someone must have had a run's page open to be shown there;
// a page open in a browser reports itself every PresenceBeat.
const (
	PresenceWindow = 30 * time.Second
	PresenceBeat   = 15 * time.Second
)

// PresencePath is where run uuid's page reports it is open.
func PresencePath(uuid string) string { return RunPath(uuid) + "/presence" }

// PresenceText says who else has the page open, as static/app.js words it too.
func PresenceText(others []string) string {
	if len(others) == 0 {
		return "Nobody else has this page open."
	}
	return "Also on this page now: " + strings.Join(others, ", ") + "."
}

// AssignmentPath is the assignment form's action for run uuid.
func AssignmentPath(uuid string) string { return RunPath(uuid) + "/assignment" }

// TakeLabel is the take button's words: "Take it", or "Take it over" from someone else.
func (a AssignmentBox) TakeLabel() string {
	if a.Force {
		return "Take it over"
	}
	return "Take it"
}
