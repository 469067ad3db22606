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
	}
	return reason
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
