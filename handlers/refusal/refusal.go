// Package refusal is the one table of how runsdesk answers a refused request: for every
// runtime error code (runtime.Code) its HTTP status, the flash each web form shows on the
// run page, the error page's sentence where a form has one, and the JSON API's message. The
// web handlers (package handlers) and the API (package handlers/api) both answer from it;
// docs/state-machine.md's error catalogue lists the same rows.
package refusal

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"runsdesk/runtime"
	"runsdesk/views"
)

// Form is a web form whose refusals the table answers; a code's flash depends on it.
type Form string

// The web forms of a run page.
const (
	Approval Form = "approval"
	Input    Form = "input"
	Cancel   Form = "cancel"
	Assign   Form = "assign"
)

// Flash is a fixed message the run page shows after a refused form. Code is what the flash
// cookie carries: codes are stable (a cookie set by one build may be read by the next), so add
// codes, never rename or reuse one.
type Flash struct {
	Code string
	views.Flash
}

// Row is how one runtime code is answered. Status is the HTTP status of the API and of the
// error page; Message is the API's error message (the runtime's own message may repeat a
// submitted name, so it is logged, never sent). Flash is the run page's flash per form (303 to
// the run page); a form without one gets the error page, with Page's sentence for that form
// when set, else the status's. A refusal that names the decision that came first is answered
// with the run page saying who decided, when and what (handlers' lateDecision); its Flash is
// the fallback when that decision is not known. Settings replaces Flash for a refusal whose
// every change (runtime.Error.Changes) is a setting of the configuration. Batch labels the refused
// item in a bulk decision's outcome table (see Row.BatchOutcome); BatchReasons replaces it
// for a refusal of the decider tool gate with that reason (runtime.Error.GateDenial).
type Row struct {
	Status       int
	Message      string
	Flash        map[Form]Flash
	Settings     map[Form]Flash
	Page         map[Form]string
	Batch        Outcome
	BatchReasons map[string]Outcome
}

// Outcome labels one item of a bulk decision (inbox bulk triage): decided, or why not.
type Outcome string

// The outcomes of a bulk decision's items.
const (
	OutcomeApproved     Outcome = "approved"
	OutcomeDenied       Outcome = "denied"
	OutcomeStale        Outcome = "stale"
	OutcomeHandled      Outcome = "already handled"
	OutcomeNotPermitted Outcome = "not permitted"
	OutcomeWaitingInput Outcome = "waiting for input"
	OutcomeNotDecided   Outcome = "not decided"
	// OutcomeAlreadyVoted: the viewer's earlier vote is counted; the turn waits for others.
	OutcomeAlreadyVoted Outcome = "already voted: waiting for more approvals"
	// The reasons a person may deny but not approve an item (see Row.BatchReasons).
	OutcomeFourEyes      Outcome = "four-eyes: you started this run"
	OutcomeAdminOnly     Outcome = "admin-only tool"
	OutcomeToolDisabled  Outcome = "tool no longer enabled"
	OutcomeToolUnknown   Outcome = "tool not registered"
	OutcomeDeciderLocked Outcome = "your account is disabled"
)

// OutcomeVoted labels a bulk item whose approval was counted as one vote of a turn that needs
// more (approvals_required): "vote recorded: 1 of 2 approvals, waiting for 1 more".
func OutcomeVoted(votes, required int) Outcome {
	return Outcome(fmt.Sprintf("vote recorded: %d of %d approvals, waiting for %d more", votes, required, max(required-votes, 0)))
}

// BatchOutcome is the label of a bulk item refused with this row's code: its Batch, else
// OutcomeNotDecided (the run is unchanged; its page says more).
func (r Row) BatchOutcome() Outcome {
	if r.Batch == "" {
		return OutcomeNotDecided
	}
	return r.Batch
}

// BatchOutcomeOf is the label of a bulk item refused with re (this row's code): the label of
// its decider tool gate reason when the row has one, else BatchOutcome.
func (r Row) BatchOutcomeOf(re *runtime.Error) Outcome {
	if re != nil && re.GateDenial != nil {
		if label, ok := r.BatchReasons[re.GateDenial.Reason]; ok {
			return label
		}
	}
	return r.BatchOutcome()
}

// The flashes of refused forms.
var (
	fourEyes       = errorFlash("four-eyes", FourEyes)
	staleTurn      = errorFlash("stale-turn", "The pending action changed — please re-review.")
	notAwaiting    = errorFlash("not-awaiting", "This run is not waiting for an approval; nothing was decided.")
	configGone     = errorFlash("config-gone", "The run's configuration no longer exists, so the run cannot continue.")
	unreadable     = errorFlash("unreadable", views.InputUnreadableText)
	notAuditable   = errorFlash("not-audited", "The approval could not be recorded, so it was not applied. Try again in a moment.")
	mayNotDecide   = errorFlash("may-not-decide", "You may not decide on this run.")
	mayNotApprove  = errorFlash("may-not-approve", "You may not approve this turn: one of its tools is restricted to admins or no longer enabled.")
	alreadyDecided = errorFlash("decided", "This run was already decided; its timeline shows by whom and when.")
	assignedOther  = errorFlash("assigned-other", "This run is assigned to someone else, and only its assignee may decide it.")
	alreadyVoted   = errorFlash("already-voted", "You already approved this turn; it waits for the other approvals it needs.")
	quorumReached  = errorFlash("quorum-reached", "This turn already had the approvals it needed and the run went on; your approval was not counted.")
	heldByOther    = errorFlash("already-assigned", "Someone else took this run first; the run page shows who holds it. An admin may reassign it.")
	mayNotAssign   = errorFlash("may-not-assign", "You may not assign this run to someone else.")
	cannotAssign   = errorFlash("cannot-assign", "The run was not assigned: it no longer waits, or that person may not decide runs.")
	inputStale     = errorFlash("input-stale", "The form changed since you opened it — please review it again.")
	inputHandled   = errorFlash("input-handled", "Someone else already handled this run; your input was not used.")
	inputLate      = errorFlash("input-late", "This run is no longer waiting for input; your input was not used.")
	inputDenied    = errorFlash("input-denied", "You may not submit input to this run: its tool is restricted to admins or no longer enabled.")
	toolChanged    = errorFlash("tool-changed", ToolChanged)
	settingChanged = errorFlash("setting-changed", views.SettingChangedText)
	inputExpired   = errorFlash("input-expired", "The server's request for input had expired; your answer was not used. The request was cancelled and the run continues without it.")
	mayNotEdit     = errorFlash("may-not-edit", "You may not edit this call: its tool is not editable, is restricted to admins or is no longer enabled.")
	expired        = errorFlash("expired", "This run's wait expired and it was handled automatically; your decision was not used.")
	notCancellable = Flash{Code: "finished", Flash: views.Flash{Kind: views.FlashInfo, Text: "This run had already finished; nothing was cancelled."}}
)

// Sentences of the error page for a form's refusal, and of the four-eyes rule.
const (
	// FourEyes is the four-eyes refusal of an approval (its flash, and the run card's note).
	FourEyes = "This configuration requires a second person: you started this run, so you may deny it but not approve it."
	// FormUnreadable is the error page of a form the runtime could not read.
	FormUnreadable = "The form could not be read. Reload the page and try again."
	// MayNotCancel is the error page of a cancel by someone who may not cancel the run.
	MayNotCancel = "You may cancel only runs you started."
	// ToolChanged is the refusal of a decision against changed definitions (its flash, and
	// the heading of the run card's list of what changed).
	ToolChanged = views.ToolChangedText
	// EditUnusable is the error page of an approval whose posted edits were refused.
	EditUnusable = "The edited arguments could not be used, so nothing was decided. Open the edit form again."
)

// table is the refusal table: one row per runtime code.
var table = map[runtime.Code]Row{
	runtime.CodeRunNotFound: {Status: http.StatusNotFound, Message: "no such run"},
	runtime.CodeRunNotAwaitingApproval: {Status: http.StatusBadRequest, Message: "the run is not waiting for approval",
		Flash: map[Form]Flash{Approval: notAwaiting}, Batch: OutcomeHandled},
	runtime.CodeRunNotAwaitingInput: {Status: http.StatusBadRequest, Message: "the run is not waiting for input",
		Flash: map[Form]Flash{Input: inputLate}},
	runtime.CodeRunAccessDenied: {Status: http.StatusForbidden, Message: "you may not do this to this run",
		Flash: map[Form]Flash{Approval: mayNotDecide, Input: inputDenied, Assign: mayNotAssign}, Page: map[Form]string{Cancel: MayNotCancel}, Batch: OutcomeNotPermitted},
	runtime.CodeRunConfigurationGone: {Status: http.StatusBadRequest, Message: "the run's configuration no longer exists",
		Flash: map[Form]Flash{Approval: configGone, Input: configGone}},
	runtime.CodeSelfApprovalDenied: {Status: http.StatusForbidden, Message: "this configuration requires a second person: the run's initiator may deny but not approve it",
		Flash: map[Form]Flash{Approval: fourEyes}, Batch: OutcomeFourEyes},
	runtime.CodeCorruptSuspendedState: {Status: http.StatusInternalServerError, Message: "the run's stored state could not be read",
		Flash: map[Form]Flash{Approval: unreadable, Input: unreadable}},
	runtime.CodeSealingKeyMissing: {Status: http.StatusInternalServerError, Message: "the run's stored data is sealed with a key missing from this desk's key set",
		Flash: map[Form]Flash{Approval: unreadable, Input: unreadable}},
	runtime.CodeRunStateUnavailable: {Status: http.StatusServiceUnavailable, Message: "the run's stored state is unavailable; try again"},
	runtime.CodeRunAlreadyResuming: {Status: http.StatusConflict, Message: "the run was already decided",
		Flash: map[Form]Flash{Approval: alreadyDecided, Input: inputHandled}, Batch: OutcomeHandled},
	runtime.CodeInvalidInputSubmission: {Status: http.StatusUnprocessableEntity, Message: "the input did not match the required schema"},
	runtime.CodeStaleApprovalTurn: {Status: http.StatusConflict, Message: "the pending turn changed since it was read; fetch the run and decide again",
		Flash: map[Form]Flash{Approval: staleTurn}, Batch: OutcomeStale},
	runtime.CodeStaleInputTurn: {Status: http.StatusConflict, Message: "the pending form changed since it was read; fetch the run and try again",
		Flash: map[Form]Flash{Input: inputStale}},
	runtime.CodeApproverNotPermitted: {Status: http.StatusForbidden, Message: "you may not approve this turn (a service account never approves a turn that declares a write, nor one a guardrail asked a person to approve)",
		Flash: map[Form]Flash{Approval: mayNotApprove}, Batch: OutcomeNotPermitted, BatchReasons: map[string]Outcome{
			runtime.ReasonToolAdminOnly: OutcomeAdminOnly, runtime.ReasonToolNoLongerPermitted: OutcomeToolDisabled,
			runtime.ReasonToolNotRegistered: OutcomeToolUnknown, runtime.ReasonDeciderDisabled: OutcomeDeciderLocked}},
	runtime.CodeSubmitterNotPermitted: {Status: http.StatusForbidden, Message: "you may not submit input to this run",
		Flash: map[Form]Flash{Input: inputDenied}},
	runtime.CodeApprovalNotAuditable: {Status: http.StatusServiceUnavailable, Message: "the approval could not be recorded, so it was not applied; try again",
		Flash: map[Form]Flash{Approval: notAuditable}},
	runtime.CodeRunNotCancellable: {Status: http.StatusConflict, Message: "the run has already finished",
		Flash: map[Form]Flash{Cancel: notCancellable}},
	runtime.CodeConfigurationNotFound:  {Status: http.StatusNotFound, Message: "no such configuration"},
	runtime.CodeUnknownTool:            {Status: http.StatusUnprocessableEntity, Message: "the configuration declares no such tool for requests"},
	runtime.CodeExternalIDConflict:     {Status: http.StatusConflict, Message: "a different request of this configuration already has this external_id"},
	runtime.CodeIdempotencyKeyConflict: {Status: http.StatusConflict, Message: "this Idempotency-Key was already used for a different request"},
	runtime.CodeCallbackNotAllowed:     {Status: http.StatusUnprocessableEntity, Message: "the callback_url must be an http or https URL without credentials whose host the configuration's callback_hosts list"},
	runtime.CodeCallbacksNotEnabled:    {Status: http.StatusUnprocessableEntity, Message: "the configuration takes no callback_url"},
	runtime.CodeRunExpired: {Status: http.StatusConflict, Message: "the run's wait expired and it was handled automatically; the decision was not used",
		Flash: map[Form]Flash{Approval: expired, Input: expired}},
	runtime.CodeInvalidRequest: {Status: http.StatusBadRequest, Message: "the request is invalid",
		Flash: map[Form]Flash{Assign: cannotAssign}, Page: map[Form]string{Input: FormUnreadable}},
	runtime.CodeToolChanged: {Status: http.StatusConflict, Message: "the tool definitions or the decision policy changed since the run paused; fetch the run and decide again",
		Flash: map[Form]Flash{Approval: toolChanged, Input: toolChanged}, Settings: map[Form]Flash{Approval: settingChanged, Input: settingChanged}, Batch: OutcomeStale},
	runtime.CodeElicitationExpired: {Status: http.StatusGone, Message: "the server's request for input expired; it was answered cancel and the run continues without this answer",
		Flash: map[Form]Flash{Input: inputExpired}},
	runtime.CodeEditNotPermitted: {Status: http.StatusForbidden, Message: "you may not edit this call (its tool is not editable, is admin-only or is no longer enabled)",
		Flash: map[Form]Flash{Approval: mayNotEdit}},
	runtime.CodeAlreadyAssigned: {Status: http.StatusConflict, Message: "the run is assigned to someone else; an admin may take it over with force",
		Flash: map[Form]Flash{Assign: heldByOther}},
	runtime.CodeAssignedToOther: {Status: http.StatusForbidden, Message: "the run is assigned to someone else, and only its assignee may decide it",
		Flash: map[Form]Flash{Approval: assignedOther, Input: assignedOther}, Batch: OutcomeNotPermitted},
	runtime.CodeAlreadyVoted: {Status: http.StatusConflict, Message: "you already approved this turn; it waits for the other approvals it needs",
		Flash: map[Form]Flash{Approval: alreadyVoted}, Batch: OutcomeAlreadyVoted},
	runtime.CodeQuorumReached: {Status: http.StatusConflict, Message: "the turn already had the approvals it needed; this approval was not counted",
		Flash: map[Form]Flash{Approval: quorumReached}, Batch: OutcomeHandled},
	runtime.CodeInvalidEdit: {Status: http.StatusUnprocessableEntity, Message: "the edited arguments were refused: the patch does not apply or the result does not match the tool's parameters",
		Page: map[Form]string{Approval: EditUnusable}},
}

// unknown answers a code the table lacks.
var unknown = Row{Status: http.StatusInternalServerError, Message: "the request could not be completed"}

func errorFlash(code, text string) Flash {
	return Flash{Code: code, Flash: views.Flash{Kind: views.FlashError, Text: text}}
}

// Of returns code's row; ok is false (and the row a 500) for a code not in the table.
func Of(code runtime.Code) (row Row, ok bool) {
	row, ok = table[code]
	if !ok {
		return unknown, false
	}
	return row, true
}

// OfError returns err's runtime error and its row; re is nil when err is no *runtime.Error.
func OfError(err error) (re *runtime.Error, row Row) {
	if !errors.As(err, &re) {
		return nil, unknown
	}
	row, _ = Of(re.Code)
	return re, row
}

// FlashOn returns the flash form shows for this row's refusal re; ok is false when form shows
// the error page instead.
func (r Row) FlashOn(form Form, re *runtime.Error) (Flash, bool) {
	if fl, ok := r.Settings[form]; ok && onlySettings(re) {
		return fl, true
	}
	fl, ok := r.Flash[form]
	return fl, ok
}

// onlySettings reports whether re carries changes and every one is a configuration setting.
func onlySettings(re *runtime.Error) bool {
	if re == nil || len(re.Changes) == 0 {
		return false
	}
	for _, ch := range re.Changes {
		if !ch.Setting() {
			return false
		}
	}
	return true
}

// Codes returns every code of the table, sorted.
func Codes() []runtime.Code {
	codes := make([]runtime.Code, 0, len(table))
	for code := range table {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}

// Flashes returns every flash of the table, each once, sorted by code.
func Flashes() []Flash {
	seen := map[string]Flash{}
	for _, row := range table {
		for _, m := range []map[Form]Flash{row.Flash, row.Settings} {
			for _, fl := range m {
				seen[fl.Code] = fl
			}
		}
	}
	out := make([]Flash, 0, len(seen))
	for _, fl := range seen {
		out = append(out, fl)
	}
	slices.SortFunc(out, func(a, b Flash) int { return strings.Compare(a.Code, b.Code) })
	return out
}
