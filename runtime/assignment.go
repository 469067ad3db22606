package runtime

import "slices"

// AssignmentPolicy is a configuration's `assignment:`: whether reviewers may assign its runs
// to others (an admin always may; a reviewer otherwise only takes a run for themself), and
// whether only the assignee may decide a run assigned to someone (Strict; otherwise anyone
// who may decide it may, and the decision records whose run it was).
type AssignmentPolicy struct {
	ReviewersMayAssign bool `json:"reviewers_may_assign,omitempty"`
	Strict             bool `json:"strict,omitempty"`
	// Auto assigns each new pause of an unassigned run to one of Pool (usernames), right
	// after the pause is stored: AutoRoundRobin by a hash of the run's uuid over the eligible
	// members, AutoLeastLoaded to the one holding the fewest waiting runs; "" assigns none.
	Auto string   `json:"auto,omitempty"`
	Pool []string `json:"pool,omitempty"`
}

// Default reports whether p is the default policy (nothing set).
func (p AssignmentPolicy) Default() bool { return p.Equal(AssignmentPolicy{}) }

// Equal reports whether p and q are the same policy (pools compared in order).
func (p AssignmentPolicy) Equal(q AssignmentPolicy) bool {
	return p.ReviewersMayAssign == q.ReviewersMayAssign && p.Strict == q.Strict && p.Auto == q.Auto && slices.Equal(p.Pool, q.Pool)
}

// The `assignment: {auto: …}` strategies.
const (
	AutoRoundRobin  = "round_robin"
	AutoLeastLoaded = "least_loaded"
)

// Assignment is a change of who holds a waiting run: To is the username of the person it goes
// to ("": the run is released); Force lets an admin change a run someone else holds (never a
// token).
type Assignment struct {
	To    string
	Force bool
	// IP is the caller's address, for the audit row.
	IP string
}

// AutoAssignActor is who makes an automatic assignment, recorded as "system:assignment".
func AutoAssignActor() Actor { return Actor{Role: RoleSystem, Name: "system:assignment"} }

// The audit outcomes of an assignment (action EventAssignment).
const (
	AssignAuto     = "auto"
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
