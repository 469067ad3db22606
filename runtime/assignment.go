package runtime

// AssignmentPolicy is a configuration's `assignment:`: whether reviewers may assign its runs
// to others (an admin always may; a reviewer otherwise only takes a run for themself), and
// whether only the assignee may decide a run assigned to someone (Strict; otherwise anyone
// who may decide it may, and the decision records whose run it was).
type AssignmentPolicy struct {
	ReviewersMayAssign bool `json:"reviewers_may_assign,omitempty"`
	Strict             bool `json:"strict,omitempty"`
}

// Assignment is a change of who holds a waiting run: To is the username of the person it goes
// to ("": the run is released); Force lets an admin change a run someone else holds (never a
// token).
type Assignment struct {
	To    string
	Force bool
	// IP is the caller's address, for the audit row.
	IP string
}

// The audit outcomes of an assignment (action EventAssignment).
const (
	AssignTaken    = "taken"
	AssignAssigned = "assigned"
	AssignReleased = "released"
	AssignForced   = "forced"
)

// AssignChange is the assignment a commit plan makes: the run goes from From (the assignee
// as read, 0 for none) to To (0: released), named ToName; the plan's guard holds only while
// the run is still assigned to From.
type AssignChange struct {
	From, To int64
	ToName   string
}

// EventAssignment records a change of a waiting run's assignee: {assignee, previous, by,
// forced}, uids (0 for none).
const EventAssignment = "assignment"

// Assigned is the run's current assignee's uid, 0 when none: a finished run has none.
func (r Run) Assigned() int64 {
	if r.Status.Terminal() {
		return 0
	}
	return r.Assignee
}
