package views

import (
	"strconv"
	"time"
)

// QueuePath is the address of the queue's health page.
const QueuePath = "/queue"

// Queue is the queue's health page: one row per configuration and tool (the desk first, each
// configuration before its tools), and, for admins, one per person. Every figure carries the
// inbox address filtered to it.
type Queue struct {
	Rows []QueueRow
	// People is nil when the viewer may not see them (reviewers); empty when nobody decided.
	People     []QueuePerson
	ShowPeople bool
	Now        time.Time
}

// QueueFigure is one figure and the inbox address filtered to it ("": no link, such as a
// configuration the catalog no longer has, or a percentile of nothing).
type QueueFigure struct {
	Text string
	URL  string
}

// QueueTimes are the time-to-decision percentiles of one class of decider, as bucket bounds
// ("< 5 min"; "—" when none decided).
type QueueTimes struct {
	P50, P90 QueueFigure
}

// QueueRow is one configuration and tool's figures. Configuration is its name ("All
// configurations" for the desk), Tool "" for every tool of it.
type QueueRow struct {
	Configuration string
	Tool          string
	// Level is 0 for the desk, 1 for a configuration, 2 for a tool.
	Level                       int
	Approval, Input             QueueFigure
	Oldest                      time.Time
	OldestURL                   string
	AgeP50, AgeP90              QueueFigure
	Expiring, Escalated, Failed QueueFigure
	Day, Week                   QueueFigure
	People, Rules, Expiry       QueueTimes
}

// Label names the row for a table's first column.
func (r QueueRow) Label() string {
	if r.Tool != "" {
		return r.Tool
	}
	return r.Configuration
}

// QueuePerson is one person's decisions of the last week and their median time to decision.
type QueuePerson struct {
	Name      string
	Decisions QueueFigure
	Median    QueueFigure
}

// QueueBound shows a bucket bound of the queue's approximate percentiles: "< 15 min" for a
// value below bound seconds, "≥ 7 d" when the value is above the last bound (over), "—" when
// nothing was counted (!ok).
func QueueBound(bound int64, over, ok bool) string {
	switch {
	case !ok:
		return "—"
	case over:
		return "≥ 7 d"
	}
	return "< " + shortDuration(bound)
}

// shortDuration writes whole seconds, minutes, hours or days, as the buckets are.
func shortDuration(s int64) string {
	switch {
	case s >= 86400 && s%86400 == 0:
		return strconv.FormatInt(s/86400, 10) + " d"
	case s >= 3600 && s%3600 == 0:
		return strconv.FormatInt(s/3600, 10) + " h"
	case s >= 60 && s%60 == 0:
		return strconv.FormatInt(s/60, 10) + " min"
	}
	return strconv.FormatInt(s, 10) + " s"
}
