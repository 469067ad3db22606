package runtime

import (
	"regexp"
	"strings"
)

// RunGroup is one of the three groups of statuses the run list pages through, each in its own
// order: waiting (longest waiting first), active (oldest created first), finished (newest
// finished first).
type RunGroup string

// The run list's groups.
const (
	GroupWaiting  RunGroup = "waiting"
	GroupActive   RunGroup = "active"
	GroupFinished RunGroup = "finished"
)

// Statuses are the statuses of group g, in their documented order (nil for an unknown group).
func (g RunGroup) Statuses() []Status {
	switch g {
	case GroupWaiting:
		return []Status{StatusWaitingApproval, StatusWaitingInput}
	case GroupActive:
		return []Status{StatusQueued, StatusRunning}
	case GroupFinished:
		return []Status{StatusCompleted, StatusFailed, StatusCancelled}
	}
	return nil
}

// GroupOf is the group of status s ("" for an unknown status).
func GroupOf(s Status) RunGroup {
	switch {
	case s.Waiting():
		return GroupWaiting
	case s == StatusQueued || s == StatusRunning:
		return GroupActive
	case s.Terminal():
		return GroupFinished
	}
	return ""
}

// RunsQuery selects one keyset page of runs of one group for the API's run list. Statuses
// (non-empty, all of Group) are the statuses listed. Filter carries the inbox's filters and
// search: ConfigurationUID, Tool (a tool a pause waits on: waiting runs only), Search and
// UUIDPrefix (see SetSearch); its other fields are ignored. The page starts strictly after
// (AfterAt, AfterUID) in the group's order, AfterAt being the time the group is ordered by
// (suspended_at, crdate, finished_at); both zero is the first page.
type RunsQuery struct {
	Group    RunGroup
	Statuses []Status
	Filter   WaitingQuery
	AfterAt  int64
	AfterUID int64
	Limit    int
}

// runIDPrefix is what the start of a run id looks like: hexadecimal digits and dashes;
// toolFilter is what a tool filter may name.
var (
	runIDPrefix = regexp.MustCompile(`^[0-9a-f-]{1,36}$`)
	toolFilter  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// ToolFilter reports whether name may be the tool filter of a run list: 1 to 64 letters,
// digits, _ and -.
func ToolFilter(name string) bool { return toolFilter.MatchString(name) }

// RunIDStart reports whether text (lower case) is what a person types to find a run by its
// id: up to 36 hexadecimal digits and dashes, at least one of them a digit or a dash (a word
// of the letters a-f alone is searched as text, which also matches the start of run ids).
func RunIDStart(text string) bool {
	return runIDPrefix.MatchString(text) && strings.ContainsAny(text, "0123456789-")
}

// SetSearch sets q's search from text as the inbox's search box reads it: text that looks like
// the start of a run id (RunIDStart, in any case) is a uuid prefix, any other text is searched
// for in run ids, configurations, tools and who started the run (Search).
func (q *WaitingQuery) SetSearch(text string) {
	if lower := strings.ToLower(text); RunIDStart(lower) {
		q.UUIDPrefix, q.Search = lower, ""
		return
	}
	q.UUIDPrefix, q.Search = "", text
}
