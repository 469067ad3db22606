package views

import "time"

// AssignmentBox is a waiting run's assignment on its page: who holds it and since when ("":
// nobody), and the forms the viewer may use: take it for themself (Me, their username; Force
// when someone else holds it, which only an admin is offered), release it, and assign it to
// one of People.
type AssignmentBox struct {
	URL        string
	Assignee   string
	Since      time.Time
	Me         string
	CanTake    bool
	CanRelease bool
	Force      bool
	People     []string
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
