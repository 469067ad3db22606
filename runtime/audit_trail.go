package runtime

import (
	"strings"
	"time"
)

// AuditEntry is one row of the audit trail. Time is unix seconds (UTC); ChainSeq is its
// sequence in the audit chain (0 while not chained yet).
type AuditEntry struct {
	UID       int64
	Time      int64
	ActorUID  int64
	ActorName string
	IP        string
	Action    string
	RunUUID   string
	Outcome   string
	Reason    string
	ChainSeq  int64
}

// AuditFilter selects a page of the audit trail (/audit, audit list): every field that is set
// must match; Actor is the actor's name.
type AuditFilter struct {
	Actor, Action, RunUUID, Outcome string
	// Since (inclusive) and Until (exclusive) are unix seconds.
	Since, Until int64
	// Before is the keyset cursor: rows with a lower uid (0: from the newest).
	Before int64
	// Limit is the page size (1–MaxAuditPage).
	Limit int
}

// String is f's filters that are set, as the audit rows of a listing or an export name them:
// "actor=ada action=login since=2026-01-31T00:00:00Z" ("" when none is set).
func (f AuditFilter) String() string {
	var parts []string
	for _, p := range [][2]string{{"actor", f.Actor}, {"action", f.Action}, {"run", f.RunUUID}, {"outcome", f.Outcome}} {
		if p[1] != "" {
			parts = append(parts, p[0]+"="+p[1])
		}
	}
	for _, p := range []struct {
		name string
		at   int64
	}{{"since", f.Since}, {"until", f.Until}} {
		if p.at > 0 {
			parts = append(parts, p.name+"="+time.Unix(p.at, 0).UTC().Format(time.RFC3339))
		}
	}
	return strings.Join(parts, " ")
}

// MaxAuditPage is the most rows one page of the audit trail holds.
const MaxAuditPage = 1000
