package views

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
)

// StatusStyle is how a run status is shown: a label, an icon (decorative; the label carries
// the meaning) and a tone that picks the badge colour.
type StatusStyle struct {
	Label string
	Icon  string
	Tone  string
}

// StatusBadge shows a run status as text with an icon (statusBadge). The badges of the known
// statuses are rendered once and then written as they are; any other status is rendered
// each time.
func StatusBadge(status string) templ.Component {
	if html, ok := knownBadges[status]; ok {
		return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
			_, err := io.WriteString(w, html)
			return err
		})
	}
	return statusBadge(status)
}

// knownBadges are the rendered badges of the statuses StatusOf knows.
var knownBadges = func() map[string]string {
	m := map[string]string{}
	for _, st := range []string{"queued", "running", "waiting_for_approval", "waiting_for_input", "completed", "failed", "cancelled"} {
		var b strings.Builder
		if err := statusBadge(st).Render(context.Background(), &b); err != nil {
			panic(fmt.Sprintf("views: render the %s badge: %v", st, err))
		}
		m[st] = b.String()
	}
	return m
}()

// StatusOf returns the style of a run status (upstream's values: queued, running,
// waiting_for_approval, waiting_for_input, completed, failed, cancelled). An unknown status is
// shown as itself in the neutral tone.
func StatusOf(status string) StatusStyle {
	switch status {
	case "queued":
		return StatusStyle{Label: "Queued", Icon: "◷", Tone: "neutral"}
	case "running":
		return StatusStyle{Label: "Running", Icon: "▶", Tone: "accent"}
	case "waiting_for_approval":
		return StatusStyle{Label: "Waiting for approval", Icon: "‖", Tone: "attention"}
	case "waiting_for_input":
		return StatusStyle{Label: "Waiting for input", Icon: "✎", Tone: "attention"}
	case "completed":
		return StatusStyle{Label: "Completed", Icon: "✓", Tone: "success"}
	case "failed":
		return StatusStyle{Label: "Failed", Icon: "✕", Tone: "danger"}
	case "cancelled":
		return StatusStyle{Label: "Cancelled", Icon: "⊘", Tone: "neutral"}
	}
	return StatusStyle{Label: status, Icon: "•", Tone: "neutral"}
}

// AbsoluteLayout is the one way pages write an absolute time: "1 Dec 2026, 18:57 UTC", the
// zone's abbreviation (or its offset, "+03", where it has none) last.
const AbsoluteLayout = "2 Jan 2006, 15:04 MST"

// AbsoluteTime formats t in loc (nil: UTC) for people, in AbsoluteLayout.
func AbsoluteTime(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	var buf [len("02 Jan 2006, 15:04 ") + 8]byte
	return string(t.In(loc).AppendFormat(buf[:0], AbsoluteLayout))
}

// zoneKey is the context key of the time zone pages write times in.
type zoneKey struct{}

// WithZone returns ctx under which the time components (Time, Expiry) write absolute times in
// loc: the time zone the person chose on their account page.
func WithZone(ctx context.Context, loc *time.Location) context.Context {
	return context.WithValue(ctx, zoneKey{}, loc)
}

// ZoneOf is the time zone WithZone set on ctx, UTC when none was.
func ZoneOf(ctx context.Context) *time.Location {
	if loc, ok := ctx.Value(zoneKey{}).(*time.Location); ok && loc != nil {
		return loc
	}
	return time.UTC
}

// DecisionTime formats when a decision was made, as a conflict notice or the timeline names
// it: "1 Dec 2026, 18:57 UTC".
func DecisionTime(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") }

// MachineTime formats t for a datetime attribute (RFC 3339, UTC).
func MachineTime(t time.Time) string {
	t = t.UTC()
	if !fourDigitYear(t) {
		return t.Format(time.RFC3339)
	}
	var buf [len("2006-01-02T15:04:05Z")]byte
	b := appendDateTime(buf[:0], t)
	b = appendTwo(append(b, ':'), t.Second())
	return string(append(b, 'Z'))
}

// fourDigitYear reports whether t's year is written with four digits, as MachineTime's
// layout writes it; it leaves other years to time.Format.
func fourDigitYear(t time.Time) bool { return t.Year() >= 0 && t.Year() <= 9999 }

// appendDateTime appends t as "2006-01-02T15:04" (MachineTime's layout, without parsing it on
// every row of a page).
func appendDateTime(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	b = appendTwo(appendTwo(b, y/100), y%100)
	b = appendTwo(append(b, '-'), int(mo))
	b = appendTwo(append(b, '-'), d)
	b = appendTwo(append(b, 'T'), t.Hour())
	return appendTwo(append(b, ':'), t.Minute())
}

// appendTwo appends 0 ≤ n < 100 as two digits.
func appendTwo(b []byte, n int) []byte { return append(b, byte('0'+n/10), byte('0'+n%10)) }

// RelativeTime describes t relative to now in words: "just now", "5 minutes ago",
// "in 2 hours", "3 days ago". static/app.js uses the same wording when it refreshes the text.
func RelativeTime(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var n int64
	var unit string
	switch {
	case d < 45*time.Second:
		return "just now"
	case d < 90*time.Minute:
		n, unit = int64(max(d.Round(time.Minute)/time.Minute, 1)), "minute"
	case d < 36*time.Hour:
		n, unit = int64(d.Round(time.Hour)/time.Hour), "hour"
	default:
		n, unit = int64(d.Round(24*time.Hour)/(24*time.Hour)), "day"
	}
	if n != 1 {
		unit += "s"
	}
	if future {
		return "in " + strconv.FormatInt(n, 10) + " " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + " ago"
}

// expiryWord is what precedes a deadline's relative time: "expires " before it, "expired "
// once it passed.
func expiryWord(t, now time.Time) string {
	if t.After(now) {
		return "expires "
	}
	return "expired "
}
