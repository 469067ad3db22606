package views

import (
	"strconv"
	"time"
)

// Inbox is the state of the inbox page: the filters as applied, the choices they offer, the
// waiting counts per kind (under the other filters), one page of rows, and the links to the
// other kinds and pages (already carrying every filter).
type Inbox struct {
	Filters        InboxFilters
	Configurations []Option
	Tools          []Option
	Ages           []Option
	ApprovalCount  int
	InputCount     int
	// CountsCapped: more runs matched than were counted; the counts are lower bounds.
	CountsCapped bool
	// KindLinks are the addresses of the All / Approval / Input views.
	AllURL, ApprovalURL, InputURL string
	// MineURL, UnassignedURL and EveryoneURL are the addresses of the whose tabs.
	MineURL, UnassignedURL, EveryoneURL string
	Rows                                []InboxRow
	// Now is the page's clock (relative times).
	Now time.Time
	// NextURL is the next page ("" on the last); FirstURL is set on every later page.
	NextURL  string
	FirstURL string
	// ReadOnly: the viewer may look but not decide (support).
	ReadOnly bool
	// Intro: the introduction shows (the viewer's first visit of the inbox in this session).
	Intro bool
	// ClearURL is the inbox without filters, on the current kind.
	ClearURL string
	// SelectAll: every row's bulk checkbox is ticked (query parameter select=all, the
	// "Select all on this page" button without JavaScript). PageQuery is this page's query
	// (filters, kind, page), which that button's form carries; SelectNoneURL is this page
	// without the selection.
	SelectAll     bool
	PageQuery     []HiddenValue
	SelectNoneURL string
	// Groups are the page's groups of approvals that may be decided together (bulk triage).
	Groups []BulkGroup
}

// InboxRow is one waiting run in the inbox's list: since when it waits, its pause's subject,
// its configuration (by name), the tools its pause is about, its status (what it waits for),
// who started it (a username, or "service account <name>"), and the link to its run page,
// which shows the full card. Unreadable: its state could not be
// read (the run page says so).
type InboxRow struct {
	RunUUID       string
	Status        string
	Subject       string
	Configuration string
	Tools         []string
	StartedBy     string
	Since         time.Time
	Unreadable    bool
	// Group is the id of the bulk group whose form the row's checkbox (in its Run cell)
	// belongs to ("": none).
	Group string
	// Expires is when the pause expires (zero: never); Escalated whether it was escalated.
	Expires   time.Time
	Escalated bool
	// Assignee is the username of whoever holds the run ("": nobody).
	Assignee string
}

// Kind is "input" or "approval".
func (r InboxRow) Kind() string {
	if r.Status == "waiting_for_input" {
		return "input"
	}
	return "approval"
}

// InboxFilters are the inbox's query parameters as the person chose them.
type InboxFilters struct {
	Kind          string
	Configuration string
	Tool          string
	Older         string
	Query         string
	// Deadline is "" (any), DeadlineSoon (expiring within an hour, soonest first),
	// DeadlineExpiring (every run with a deadline, soonest first) or DeadlineEscalated.
	Deadline string
	// Assigned is the whose tab: "" (All), AssignedMe (Mine) or AssignedNone (Unassigned);
	// Assignee keeps the runs assigned to that username.
	Assigned string
	Assignee string
}

// The whose tabs' values (query parameter assigned).
const (
	AssignedMe   = "me"
	AssignedNone = "none"
)

// SelectAllValue is the value of the inbox's query parameter select that ticks every bulk
// checkbox of the page.
const SelectAllValue = "all"

// The deadline filter's values (query parameter deadline).
const (
	DeadlineSoon      = "soon"
	DeadlineExpiring  = "expiring"
	DeadlineEscalated = "escalated"
)

// DeadlineOptions are the choices of the deadline filter.
func DeadlineOptions() []Option {
	return []Option{{Value: DeadlineSoon, Label: "Expiring within an hour"}, {Value: DeadlineExpiring, Label: "Expiring soonest first"},
		{Value: DeadlineEscalated, Label: "Escalated"}}
}

// ByExpiry reports whether the list is ordered by expiry (soonest first) instead of by
// waiting time.
func (f InboxFilters) ByExpiry() bool {
	return f.Deadline == DeadlineSoon || f.Deadline == DeadlineExpiring
}

// Active reports whether any filter other than the kind narrows the list.
func (f InboxFilters) Active() bool { return f.Set() > 0 }

// Set counts the filters other than the kind that narrow the list.
func (f InboxFilters) Set() int {
	n := 0
	for _, v := range []string{f.Configuration, f.Tool, f.Older, f.Query, f.Deadline, f.Assignee} {
		if v != "" {
			n++
		}
	}
	return n
}

// Total is the number of waiting runs of both kinds.
func (in Inbox) Total() int { return in.ApprovalCount + in.InputCount }

// CountText shows a waiting count, with "+" when the counts are lower bounds.
func (in Inbox) CountText(n int) string {
	if in.CountsCapped {
		return strconv.Itoa(n) + "+"
	}
	return strconv.Itoa(n)
}
