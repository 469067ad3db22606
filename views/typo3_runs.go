package views

import (
	"strconv"
	"time"

	"runsdesk/runtime/schema"
)

// NavTYPO3Runs is the list of the TYPO3 extension's waiting runs.
const NavTYPO3Runs Nav = "typo3-runs"

// TYPO3RunsPath lists the TYPO3 extension's waiting runs; TYPO3RunPath(uuid) shows one.
const TYPO3RunsPath = "/typo3/runs"

// TYPO3RunPath is the read-only page of the TYPO3 extension's run uuid.
func TYPO3RunPath(uuid string) string { return TYPO3RunsPath + "/" + uuid }

// TYPO3Banner is what heads every page of the extension's runs: they are the extension's to
// decide. BackendURL, when set, links the words "decide it in TYPO3" to the TYPO3 backend.
const TYPO3Banner = "Run by the TYPO3 extension — decide it in TYPO3"

// TYPO3SealedText stands in for the pending calls of a payload the extension sealed.
const TYPO3SealedText = "The pending calls are sealed by the TYPO3 extension; runsdesk does not open them."

// TYPO3Runs is one page of the extension's waiting runs, oldest first.
type TYPO3Runs struct {
	BackendURL string
	Rows       []TYPO3RunRow
	NextURL    string
	FirstURL   string
	Now        time.Time
}

// TYPO3RunRow is one waiting run of the extension as the list shows it.
type TYPO3RunRow struct {
	UUID          string
	Status        string
	Configuration string
	Owner         int64
	Since         time.Time
}

// TYPO3PayloadKind is what a TYPO3Run's page shows of its pause.
type TYPO3PayloadKind string

// What the page shows of a run's pause.
const (
	// TYPO3PayloadNone: the run does not wait; nothing is pending.
	TYPO3PayloadNone TYPO3PayloadKind = ""
	// TYPO3PayloadSealed: TYPO3SealedText.
	TYPO3PayloadSealed TYPO3PayloadKind = "sealed"
	// TYPO3PayloadUnreadable: the state could not be read; Unreadable says why.
	TYPO3PayloadUnreadable TYPO3PayloadKind = "unreadable"
	// TYPO3PayloadApproval: the pending calls, waiting for approval.
	TYPO3PayloadApproval TYPO3PayloadKind = "approval"
	// TYPO3PayloadInput: the pending calls and the input form, every control disabled.
	TYPO3PayloadInput TYPO3PayloadKind = "input"
)

// TYPO3Run is one run of the extension as its read-only page shows it. Since is when it began
// to wait (zero when it does not); Calls are its pending calls (PendingCallView: tool and
// arguments); for an input pause InputTool is the tool the input is for and Fields its form
// (none: NoForm says why).
type TYPO3Run struct {
	BackendURL    string
	UUID          string
	Status        string
	Configuration string
	Owner         int64
	Created       time.Time
	Since         time.Time
	Now           time.Time
	Kind          TYPO3PayloadKind
	Unreadable    string
	Calls         []PendingCallView
	InputTool     string
	Fields        []schema.Field
	NoForm        string
}

// TYPO3Owner names the backend user who started a run: "backend user 7", or "none" for a
// run no backend user started (the scheduler's, the CLI's).
func TYPO3Owner(uid int64) string {
	if uid <= 0 {
		return "none"
	}
	return "backend user " + strconv.FormatInt(uid, 10)
}

// TYPO3Configuration is a configuration identifier as shown ("(none)" when empty).
func TYPO3Configuration(identifier string) string {
	if identifier == "" {
		return "(none)"
	}
	return identifier
}

// form is the input form the page renders disabled: InputForm's fields, read only.
func (r TYPO3Run) form() InputFormProps {
	return InputFormProps{RunUUID: r.UUID, Fields: r.Fields, ReadOnly: true, Now: r.Now}
}

// card is what pendingCall needs of the card around it: whether the pause is an input pause
// (its calls' arguments are collapsed).
func (r TYPO3Run) card() PendingCard {
	return PendingCard{RunUUID: r.UUID, Input: r.Kind == TYPO3PayloadInput}
}
