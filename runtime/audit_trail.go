package runtime

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

// AuditFilter selects rows of the audit trail (a page of /audit, audit list): each field that is set must
// match (Actor the actor's name; Since and Until unix seconds, Since inclusive, Until
// exclusive); Before is the keyset cursor (rows with a lower uid; 0: from the newest) and
// Limit the page size (1–MaxAuditPage).
type AuditFilter struct {
	Actor, Action, RunUUID, Outcome string
	Since, Until                    int64
	Before                          int64
	Limit                           int
}

// MaxAuditPage is the most rows one page of the audit trail holds.
const MaxAuditPage = 1000
