package views

import (
	"strconv"
	"time"
)

// AuditPath is the audit trail's page (admins); AuditExportPath its export of the filtered
// rows (?format=csv or jsonl, with the page's filters).
const (
	AuditPath       = "/audit"
	AuditExportPath = "/audit/export"
)

// AuditFilters are the filters of the audit trail's page as typed (Since and Until dates,
// YYYY-MM-DD in UTC, Until inclusive).
type AuditFilters struct {
	Actor, Action, Run, Outcome, Since, Until string
}

// AuditTrail is one page of the audit trail, newest first, with its filters, export links
// and keyset page links.
type AuditTrail struct {
	Filters  AuditFilters
	Rows     []AuditRow
	NextURL  string
	FirstURL string
	CSVURL   string
	JSONLURL string
	Now      time.Time
}

// AuditRow is one audit row as the page shows it; ChainSeq is 0 while it is not chained yet.
type AuditRow struct {
	UID      int64
	Time     time.Time
	Actor    string
	ActorUID int64
	IP       string
	Action   string
	RunUUID  string
	Outcome  string
	Reason   string
	ChainSeq int64
}

// RowLabel is "row N" (its uid), after a separator when a reason or an address precedes it.
func (r AuditRow) RowLabel() string {
	label := "row " + strconv.FormatInt(r.UID, 10)
	if r.Reason != "" || r.IP != "" {
		return " · " + label
	}
	return label
}
