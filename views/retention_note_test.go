package views

import (
	"testing"
	"time"

	"runsdesk/runtime/retention"
)

func TestRetentionNote(t *testing.T) {
	finished := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	soon, later := finished.Add(time.Hour), finished.Add(400*retention.Day)
	for _, c := range []struct {
		name string
		p    retention.Policy
		now  time.Time
		want string
	}{
		{"default, ahead", retention.Default(), soon, "Output and transcript removed on 2027-01-01 (retention 30 days)"},
		{"default, past", retention.Default(), later, "Output and transcript were removed on 2027-01-01 (retention 30 days)"},
		{"apart, with runs", retention.Policy{Outputs: 90 * retention.Day, Transcripts: 30 * retention.Day, Runs: 365 * retention.Day}, soon,
			"Output removed on 2027-03-02 (retention 90 days); transcript removed on 2027-01-01 (retention 30 days); the run removed on 2027-12-02 (retention 365 days)"},
		{"run first", retention.Policy{Outputs: 90 * retention.Day, Transcripts: 90 * retention.Day, Runs: retention.Day}, later,
			"Output and transcript were removed on 2026-12-03 (retention 1 day); the run was removed on 2026-12-03 (retention 1 day)"},
	} {
		if got := RetentionNote(c.p, finished, c.now); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if got := RetentionNote(retention.Default(), time.Time{}, soon); got != "" {
		t.Errorf("unfinished run: %q, want none", got)
	}
}
