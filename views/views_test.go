package views

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

// TestNoEscapeHatches bans the templ and html/template bypasses of output encoding from every
// hand-written file of views (the generated *_templ.go follow from the .templ files).
func TestNoEscapeHatches(t *testing.T) {
	banned := regexp.MustCompile(`templ\.Raw|SafeURL|SafeClass|SafeCSS|template\.HTML|@templ\.FromGoHTML`)
	files, err := filepath.Glob("*")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_templ.go") || (!strings.HasSuffix(f, ".templ") && !strings.HasSuffix(f, ".go")) ||
			f == "views_test.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if m := banned.FindString(line); m != "" {
				t.Errorf("%s:%d uses %s: views must escape everything", f, i+1, m)
			}
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("checked only %d files", checked)
	}
}

func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestStatusBadgeHasTextAndIcon(t *testing.T) {
	for _, tc := range []struct{ status, label, tone string }{
		{"queued", "Queued", "neutral"},
		{"running", "Running", "accent"},
		{"waiting_for_approval", "Waiting for approval", "attention"},
		{"waiting_for_input", "Waiting for input", "attention"},
		{"completed", "Completed", "success"},
		{"failed", "Failed", "danger"},
		{"cancelled", "Cancelled", "neutral"},
		{"<b>odd</b>", "<b>odd</b>", "neutral"},
	} {
		doc := render(t, StatusBadge(tc.status))
		badge := doc.Find(`[data-testid="status-badge"]`)
		if got := badge.Find(".badge__label").Text(); got != tc.label {
			t.Errorf("%s: label %q, want %q", tc.status, got, tc.label)
		}
		if icon := badge.Find(".badge__icon"); strings.TrimSpace(icon.Text()) == "" || icon.AttrOr("aria-hidden", "") != "true" {
			t.Errorf("%s: want a decorative icon next to the text", tc.status)
		}
		if !badge.HasClass("badge--" + tc.tone) {
			t.Errorf("%s: class %q, want tone %s", tc.status, badge.AttrOr("class", ""), tc.tone)
		}
		if doc.Find("b").Length() != 0 {
			t.Errorf("%s: markup in the status was not escaped", tc.status)
		}
	}
}

func TestTimeShowsRelativeAndAbsolute(t *testing.T) {
	now := time.Date(2026, 11, 29, 21, 20, 0, 0, time.UTC)
	doc := render(t, Time(now.Add(-5*time.Minute), now))
	el := doc.Find(`time[data-relative]`)
	if el.Text() != "5 minutes ago" || el.AttrOr("datetime", "") != "2026-11-29T21:15:00Z" ||
		el.AttrOr("title", "") != "29 Nov 2026, 21:15 UTC" {
		t.Errorf("time element: text %q datetime %q title %q", el.Text(), el.AttrOr("datetime", ""), el.AttrOr("title", ""))
	}
	if got := doc.Find(".visually-hidden").Text(); got != "(29 Nov 2026, 21:15 UTC)" {
		t.Errorf("screen-reader text %q", got)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Time(now.Add(-5*time.Minute), now).Render(WithZone(t.Context(), berlin), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `title="29 Nov 2026, 22:15 CET"`) || !strings.Contains(b.String(), `datetime="2026-11-29T21:15:00Z"`) {
		t.Errorf("in the person's zone: %s, want the absolute time in Europe/Berlin and the datetime in UTC", b.String())
	}
	if render(t, Time(time.Time{}, now)).Find("time").Length() != 0 {
		t.Error("a zero time rendered a <time>")
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "just now"},
		{-10 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{89 * time.Minute, "89 minutes ago"},
		{2 * time.Hour, "2 hours ago"},
		{-3 * time.Hour, "in 3 hours"},
		{36 * time.Hour, "2 days ago"},
		{24 * 10 * time.Hour, "10 days ago"},
	} {
		if got := RelativeTime(now.Add(-tc.d), now); got != tc.want {
			t.Errorf("RelativeTime(-%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestLayoutEscapesAndCarriesTheToken(t *testing.T) {
	hostile := `<img src=x onerror=alert(1)>`
	p := Page{Title: hostile, User: &User{Name: hostile, Role: "support"}, CSRF: `tok"en`,
		Flashes: []Flash{{Kind: FlashError, Text: hostile}, {Kind: FlashSuccess, Text: "Saved."}},
		Assets:  Assets{CSS: "/static/app.1.css", JS: "/static/app.1.js"}}
	doc := render(t, HomePage(p, Home{}))
	if doc.Find("img").Length() != 0 {
		t.Error("a user-controlled string became markup")
	}
	if v, _ := doc.Find(`form[action="/logout"] input[name="_csrf"]`).Attr("value"); v != `tok"en` {
		t.Errorf("logout form token %q", v)
	}
	flashes := doc.Find(`[data-testid="flash"]`)
	if flashes.Length() != 2 || flashes.First().AttrOr("role", "") != "alert" || flashes.Last().AttrOr("role", "") != "status" {
		t.Errorf("flashes: %d, roles %q/%q; want an alert and a status", flashes.Length(),
			flashes.First().AttrOr("role", ""), flashes.Last().AttrOr("role", ""))
	}
	if doc.Find(`[data-testid="nav-start"]`).Length() != 0 {
		t.Error("support sees Start a run")
	}
	if got := doc.Find("title").Text(); got != hostile+" · runsdesk" {
		t.Errorf("title %q", got)
	}
	if doc.Find(`script[src="/static/app.1.js"][defer]`).Length() != 1 || doc.Find("script:not([src])").Length() != 0 {
		t.Error("want exactly the external deferred script, no inline script")
	}
}

func TestNavMarksTheCurrentPage(t *testing.T) {
	p := Page{Nav: NavRecent, User: &User{Name: "rita", Role: "reviewer", CanStart: true}}
	doc := render(t, Layout(p))
	if doc.Find(`[aria-current="page"]`).AttrOr("data-testid", "") != "nav-recent" {
		t.Error("the current page is not marked")
	}
	if doc.Find(`nav a`).Length() != 3 {
		t.Errorf("nav links: %d, want 3", doc.Find(`nav a`).Length())
	}
}

func TestErrorSummaryLinksToFields(t *testing.T) {
	doc := render(t, ErrorSummary("Fix these", []SummaryItem{{FieldID: "amount", Text: "Too small"}}))
	s := doc.Find(`[data-testid="error-summary"]`)
	if s.AttrOr("role", "") != "alert" || s.AttrOr("tabindex", "") != "-1" {
		t.Error("the summary must be an alert that can take focus")
	}
	if s.Find(`a[href="#amount"]`).Text() != "Too small" {
		t.Error("the summary does not link to the field")
	}
	if fe := render(t, FieldError("amount-error", "Too small")).Find("#amount-error"); fe.Find(`[aria-hidden="true"]`).Length() != 1 || !strings.Contains(fe.Text(), "Too small") {
		t.Error("field error needs text and an icon")
	}
	if render(t, FieldError("x", "")).Find("p").Length() != 0 {
		t.Error("an empty field error rendered")
	}
}

// TestStatusBadgeServedAsRendered: the badge StatusBadge writes for a known status is exactly
// the markup statusBadge renders for it.
func TestStatusBadgeServedAsRendered(t *testing.T) {
	for _, st := range []string{"queued", "running", "waiting_for_approval", "waiting_for_input", "completed", "failed", "cancelled", "odd"} {
		var served, rendered strings.Builder
		if err := StatusBadge(st).Render(t.Context(), &served); err != nil {
			t.Fatal(err)
		}
		if err := statusBadge(st).Render(t.Context(), &rendered); err != nil {
			t.Fatal(err)
		}
		if served.String() != rendered.String() || !strings.Contains(served.String(), `data-status="`+st+`"`) {
			t.Errorf("%s: served %q, rendered %q", st, served.String(), rendered.String())
		}
	}
}

// TestTimeLayoutsAsTimeFormat: AbsoluteTime writes "1 Dec 2026, 18:57 UTC" in the zone asked
// for, and MachineTime what time.Format writes with RFC 3339 in UTC, from any location and for
// years of any width.
func TestTimeLayoutsAsTimeFormat(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	if got := AbsoluteTime(time.Date(2026, 12, 1, 18, 57, 30, 0, time.UTC), nil); got != "1 Dec 2026, 18:57 UTC" {
		t.Errorf("AbsoluteTime = %q, want 1 Dec 2026, 18:57 UTC", got)
	}
	times := []time.Time{
		time.Date(2026, 11, 29, 21, 20, 5, 999, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, berlin),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 15, 12, 30, 0, 0, time.UTC), time.Unix(0, 0), time.Unix(1_800_000_000, 0),
	}
	for i := int64(0); i < 2000; i++ {
		times = append(times, time.Unix(i*7_919_993, 0).In(berlin))
	}
	for _, tm := range times {
		if got, want := AbsoluteTime(tm, nil), tm.UTC().Format("2 Jan 2006, 15:04 UTC"); got != want {
			t.Errorf("AbsoluteTime(%v) = %q, want %q", tm, got, want)
		}
		if got, want := AbsoluteTime(tm, berlin), tm.In(berlin).Format("2 Jan 2006, 15:04 CET"); got != want {
			t.Errorf("AbsoluteTime(%v, CET) = %q, want %q", tm, got, want)
		}
		if got, want := MachineTime(tm), tm.UTC().Format(time.RFC3339); got != want {
			t.Errorf("MachineTime(%v) = %q, want %q", tm, got, want)
		}
	}
}

// TestTimesHaveOneComponent: no page writes a time but through Time (components.templ), so
// every time a page shows is a <time datetime> with the one absolute format: no other template
// opens a <time> element or formats a time itself.
func TestTimesHaveOneComponent(t *testing.T) {
	files, err := filepath.Glob("*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("templates: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "//") {
				continue
			}
			if (f != "components.templ" && strings.Contains(code, "<time")) || strings.Contains(code, ".Format(") ||
				strings.Contains(code, "AbsoluteTime(") && f != "components.templ" {
				t.Errorf("%s:%d writes a time itself; use @Time or @Expiry: %s", f, i+1, code)
			}
		}
	}
}

// TestFinishedStyleSaysTheExpiry: a finished run whose pause expired never reads as a plain
// success: its badge and reason say what the expiry did; a run that never expired, or one
// that waits again, keeps its status's badge and reason.
func TestFinishedStyleSaysTheExpiry(t *testing.T) {
	for _, tc := range []struct {
		status, reason, expiry string
		label, tone, text      string
	}{
		{"completed", "completed", "", "Completed", "success", "Completed"},
		{"completed", "completed", "deny", "Completed after expiry", "attention", ExpiryText("deny")},
		{"completed", "completed", "answer", "Completed after expiry", "attention", ExpiryText("answer")},
		{"failed", "provider_failed", "deny", "Failed after expiry", "danger", "The model provider failed · " + ExpiryText("deny")},
		{"cancelled", "expired", "cancel", "Cancelled on expiry", "neutral", ExpiryText("cancel")},
		{"cancelled", "cancelled", "deny", "Cancelled after expiry", "neutral", "Cancelled · " + ExpiryText("deny")},
		{"waiting_for_approval", "", "deny", "Waiting for approval", "attention", ExpiryText("deny")},
	} {
		s := FinishedStyle(tc.status, tc.expiry)
		if s.Label != tc.label || s.Tone != tc.tone {
			t.Errorf("%s after %q: %q in %s, want %q in %s", tc.status, tc.expiry, s.Label, s.Tone, tc.label, tc.tone)
		}
		if got := FinishedReason(tc.reason, tc.expiry); got != tc.text {
			t.Errorf("%s/%s after %q: reason %q, want %q", tc.status, tc.reason, tc.expiry, got, tc.text)
		}
	}
}
