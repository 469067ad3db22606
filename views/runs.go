package views

import (
	"strconv"
	"strings"
)

// Option is one choice of a select: the value posted and the label shown.
type Option struct {
	Value string
	Label string
}

// Badge is a small label with an icon; Tone picks the colour (neutral, accent, attention,
// success, danger), which only repeats what Label says.
type Badge struct {
	Label string
	Icon  string
	Tone  string
}

// ReasonLabel describes a termination reason (docs/state-machine.md) in words; "" stays "" and an
// unknown reason is shown as stored.
func ReasonLabel(reason string) string {
	switch reason {
	case "completed":
		return "Completed"
	case "max_iterations":
		return "Stopped at the iteration limit"
	case "budget_exhausted":
		return "Budget used up (tokens or cost)"
	case "policy_denied":
		return "Refused by a policy"
	case "approval_denied":
		return "Needed an approval it could not get"
	case "provider_failed":
		return "The model provider failed"
	case "cancelled":
		return "Cancelled"
	case "retries_exhausted":
		return "Gave up after repeated retries"
	case "not_retryable":
		return "Failed and could not be retried safely"
	case "context_truncated":
		return "Too long for the context window"
	case "suspend_failed":
		return "Could not store its pause"
	case "expired":
		return "Cancelled when its wait expired"
	}
	return reason
}

// ExpiryText says what a pause's expiry did, by its action (deny, answer, cancel).
func ExpiryText(action string) string {
	switch action {
	case "deny":
		return "Expired: nobody decided in time, so the pending calls were denied automatically"
	case "answer":
		return "Expired: nobody answered in time, so the configured answer was submitted automatically"
	case "cancel":
		return "Expired: nobody decided in time, so the run was cancelled automatically"
	}
	return "Expired: nobody decided in time"
}

// FinishedReason is a finished run's reason (ReasonLabel) and, when one of its pauses expired
// (expiry: what the latest expiry did, "" when none), what the expiry did (ExpiryText).
func FinishedReason(reason, expiry string) string {
	if expiry == "" {
		return ReasonLabel(reason)
	}
	if reason == "" || reason == "completed" || reason == "expired" {
		return ExpiryText(expiry)
	}
	return ReasonLabel(reason) + " · " + ExpiryText(expiry)
}

// FinishedStyle is the style of a run's status (StatusOf) when one of its pauses expired
// (expiry, as FinishedReason): a finished run reads "Completed after expiry", "Failed after
// expiry", "Cancelled after expiry", or "Cancelled on expiry" when the expiry cancelled it; a
// completed one in the attention tone with an hourglass, never the success badge. A run not
// finished keeps its status's style.
func FinishedStyle(status, expiry string) StatusStyle {
	s := StatusOf(status)
	switch {
	case expiry == "" || (status != "completed" && status != "failed" && status != "cancelled"):
		return s
	case expiry == "cancel" && status == "cancelled":
		s.Label = "Cancelled on expiry"
	default:
		s.Label += " after expiry"
	}
	if s.Tone == "success" {
		s.Icon, s.Tone = "⌛", "attention"
	}
	return s
}

// Cost formats an estimated cost with four decimals; zero is blank.
func Cost(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// Count formats a non-negative count with thin grouping ("12 345").
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 || len(s) <= 4 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteString("\u202f")
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// RunPath is the address of a run's page.
func RunPath(uuid string) string { return "/runs/" + uuid }

// ShortID is the first eight characters of a run uuid, for tight spaces; the full id stays
// available to screen readers and in titles.
func ShortID(uuid string) string {
	if len(uuid) > 8 {
		return uuid[:8]
	}
	return uuid
}
