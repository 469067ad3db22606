package views

import (
	"net/url"
	"strings"
)

// ModelWords is what the model wrote beside a paused turn's calls, shown apart from the
// arguments as the model's (untrusted) words: its first ModelWordsLines lines, the rest behind
// a <details> that works without JavaScript.
type ModelWords struct {
	Text string
	// Caller, set for an external request, names the service account whose words they are:
	// shown as the caller's words rather than the model's.
	Caller string
}

// ModelWordsLines is how many lines of the model's words show before the rest is collapsed.
const ModelWordsLines = 4

// maxModelWordsHead bounds the characters shown before the rest is collapsed.
const maxModelWordsHead = 400

// head is the part always shown; rest what the <details> holds ("" when nothing is hidden).
func (m ModelWords) head() (head, rest string) {
	lines := strings.SplitAfter(strings.TrimSpace(m.Text), "\n")
	n := min(len(lines), ModelWordsLines)
	head = strings.Join(lines[:n], "")
	if len(head) > maxModelWordsHead {
		cut := strings.LastIndexByte(head[:maxModelWordsHead], ' ')
		if cut <= 0 {
			cut = maxModelWordsHead
		}
		for cut > 0 && cut < len(head) && head[cut]&0xC0 == 0x80 {
			cut--
		}
		return head[:cut], strings.TrimSpace(m.Text)[cut:]
	}
	return strings.TrimRight(head, "\n"), strings.Join(lines[n:], "")
}

// EditCallPage is step one of "Edit and approve": the call's tool, the model's words and
// arguments, and the form made from the tool's parameters (Form, an InputFormProps posting to
// the edit route, prefilled with the model's arguments or the values as posted). EditedBy
// names who edited the pending call on a turn that needs several approvals (Proposed is then
// their arguments; "": the model's).
type EditCallPage struct {
	RunUUID  string
	CallID   string
	Tool     string
	Words    ModelWords
	Proposed string
	Form     InputFormProps
	EditedBy string
}

// ChangeRow is one line of the before → after table of an edit: the JSON pointer changed,
// what happened there (changed, added, removed) and the value before and after as JSON text
// (Before or After "" when there was or is none).
type ChangeRow struct {
	Path   string
	Change string
	Before string
	After  string
}

// EditReviewPage is step two of "Edit and approve": the change as a readable table and as
// the RFC 6902 patch, the approval form carrying the patch and its digest (posted to
// Approval.Action with FieldEdits and FieldPatchDigest), and a form going back to the edit
// form with the values as typed (BackAction, BackValues: name → values).
type EditReviewPage struct {
	RunUUID     string
	CallID      string
	Tool        string
	Rows        []ChangeRow
	Patch       string
	Edits       string
	PatchDigest string
	Approval    ApprovalForm
	BackAction  string
	BackValues  []HiddenValue
	// Votes is set on a turn that needs several approvals: the edit is a vote that voids
	// those so far (VotesView.Voids).
	Votes *VotesView
}

// HiddenValue is one hidden field of a form.
type HiddenValue struct {
	Name  string
	Value string
}

// Names of the approval form's edit fields and of the edit form's "back" button.
const (
	FieldEdits       = "edits"
	FieldPatchDigest = "patch_digest"
	FieldEditBack    = "_back"
)

// EditCallPath is the edit form of call callID of run uuid (the call id in the query).
func EditCallPath(uuid, callID string) string {
	return RunPath(uuid) + "/edit?" + url.Values{"call": {callID}}.Encode()
}

// CallView is one call of the run as its page lists it: the model's (proposed), the approved
// and the effective arguments (what the tool was sent), each indented JSON or "" when there is
// none, whether it ran (Executed), and for a call an approval edited, who edited it and the
// change table.
type CallView struct {
	CallID    string
	Tool      string
	Executed  bool
	EditedBy  string
	Proposed  string
	Approved  string
	Effective string
	Rows      []ChangeRow
}

// Byline names the call under its tool: "call ID", and who edited it when an approval did.
func (c CallView) Byline() string {
	if c.EditedBy == "" {
		return "call " + c.CallID
	}
	return "call " + c.CallID + ", edited by " + c.EditedBy
}

// label names whose words m holds: the caller's for an external request, else the model's.
func (m ModelWords) label() string {
	if m.Caller != "" {
		return "The caller's words"
	}
	return "The model's words"
}
