package views

// Bulk triage: the inbox's groups of approvals that may be decided together, the
// confirmation page and the per-item outcome page.

import "fmt"

// BulkPath is the address of the confirmation (GET, the selected runs as "run") and of the
// decision (POST) of a bulk batch.
const BulkPath = "/runs/bulk"

// Bulk form field names: a selected run (inbox) and a carried item (confirmation), "<run
// uuid> <turn digest>".
const (
	FieldBulkRun  = "run"
	FieldBulkItem = "item"
)

// MaxBulkItems is the most runs one bulk batch decides.
const MaxBulkItems = 50

// BulkGroup is one group of the inbox's waiting approvals that may be decided together: the
// same tools under the same decision policy. ID is its selection form's id, which the rows'
// checkboxes name (form attribute), so only its own rows can be submitted with it.
type BulkGroup struct {
	ID     string
	Tools  string
	Policy string
	Count  int
}

// BulkConfirm is the confirmation page of a batch: every item compactly (subject, each call's
// tool and arguments on one line) with its digests, the runs left out (skipped), and the form.
type BulkConfirm struct {
	Tools          string
	Policy         string
	Items          []BulkItem
	Skipped        []BulkSkipped
	IdempotencyKey string
}

// BulkSkipped is a selected run left out of a batch and why, as a batch outcome labels it
// (waiting for input, already handled, not permitted, not decided).
type BulkSkipped struct {
	RunUUID string
	Outcome string
}

// BulkItem is one run of a batch as the confirmation page lists it.
type BulkItem struct {
	RunUUID string
	Subject string
	Calls   []BulkCall
	Digest  string
	// PinDigest binds the item's decision to the tool definitions shown (runtime.Pause.PinDigest).
	PinDigest string
	// DenyOnly, when set, is why the viewer may deny but not approve the run, as its outcome
	// would say ("four-eyes: you started this run", "admin-only tool").
	DenyOnly string
}

// BulkCall is one pending call of a batch item: its tool and its arguments as one line of JSON.
type BulkCall struct {
	Tool      string
	Arguments string
}

// Value is the item's hidden form value: its run, the digest of the turn shown and the digest
// of the definitions shown.
func (i BulkItem) Value() string { return i.RunUUID + " " + i.Digest + " " + i.PinDigest }

// DenyOnly lists the items the viewer may deny but not approve.
func (b BulkConfirm) DenyOnly() []BulkItem {
	var out []BulkItem
	for _, it := range b.Items {
		if it.DenyOnly != "" {
			out = append(out, it)
		}
	}
	return out
}

// Approvable counts the items the viewer may approve.
func (b BulkConfirm) Approvable() int { return len(b.Items) - len(b.DenyOnly()) }

// BulkResult is the outcome table of a decided batch, one row per item in the order posted.
type BulkResult struct {
	Approved bool
	Rows     []BulkOutcomeRow
}

// BulkOutcomeRow is one item's outcome: approved, denied, a vote recorded, stale, already
// handled, waiting for input, not permitted or not decided (Tone picks the badge's colour; the
// label says it in words). Voted marks an approval counted as one vote of a turn that needs
// more: the run still waits.
type BulkOutcomeRow struct {
	RunUUID string
	Subject string
	Outcome string
	Tone    string
	Voted   bool
}

// VotesNote says how many approvals were counted as votes on runs that still wait for more
// ("" when none).
func (r BulkResult) VotesNote() string {
	n := 0
	for _, row := range r.Rows {
		if row.Voted {
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return "1 approval was recorded as a vote; its run waits for more approvals."
	}
	return fmt.Sprintf("%d approvals were recorded as votes; their runs wait for more approvals.", n)
}

// Decided counts the rows whose verdict was recorded and decided their turn.
func (r BulkResult) Decided() int {
	n := 0
	for _, row := range r.Rows {
		if row.Tone == "success" {
			n++
		}
	}
	return n
}
