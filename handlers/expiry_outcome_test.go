package handlers

import (
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

// expireSteps takes the deadline steps of uuid one by one: its reminder, its escalation,
// then its expiry (after_escalation deny), and runs the continuation to its end.
func (a *testApp) expireSteps(uuid string) {
	a.t.Helper()
	now := time.Now().Unix()
	a.exec(`UPDATE tx_nrllm_agentrun SET remind_at = ?, escalate_at = ?, expires_at = ?, wait_due = ?,
		wait_policy = '{"action":"escalate","after_escalation":"deny"}' WHERE uuid = ?`, now-5, now+1800, now+3600, now-5, uuid)
	for _, step := range []string{"remind", "escalate", "expire"} {
		switch step {
		case "escalate":
			a.exec(`UPDATE tx_nrllm_agentrun SET escalate_at = ?, wait_due = ? WHERE uuid = ?`, now-4, now-4, uuid)
		case "expire":
			a.exec(`UPDATE tx_nrllm_agentrun SET expires_at = ?, wait_due = ? WHERE uuid = ?`, now-3, now-3, uuid)
		}
		if rep, err := a.rt.Expire(a.t.Context(), 10); err != nil || rep.Reminded+rep.Escalated+rep.Expired != 1 {
			a.t.Fatalf("%s: %+v %v, want one step", step, rep, err)
		}
	}
	for i := 0; a.row(uuid).Status == runtime.StatusQueued; i++ {
		if _, err := a.rt.RunOnce(a.t.Context()); err != nil || i > 10 {
			a.t.Fatalf("run once: %v", err)
		}
	}
}

// TestExpiredRunSaysSoEverywhere: a run reminded, escalated and then denied by its expiry,
// which completes afterwards, reads "Completed after expiry" with what the expiry did in Recent
// runs and on its run page (never the success badge), and its timeline gives the reminder,
// the escalation, the expiry and the calls the expiry denied each a sentence; a run the
// expiry cancelled reads "Cancelled on expiry".
func TestExpiredRunSaysSoEverywhere(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	denied := app.pause(runtime.RoleAdmin, "mail")
	cancelled := app.pause(runtime.RoleAdmin, "ask")
	plain := app.pause(runtime.RoleAdmin, "plain")
	app.expireSteps(denied)
	past := time.Now().Unix() - 1
	app.exec(`UPDATE tx_nrllm_agentrun SET expires_at = ?, wait_due = ?, wait_policy = '{"action":"cancel"}' WHERE uuid = ?`, past, past, cancelled)
	if rep, err := app.rt.Expire(t.Context(), 10); err != nil || rep.Expired != 1 {
		t.Fatalf("expire: %+v %v", rep, err)
	}
	if st := app.row(denied).Status; st != runtime.StatusCompleted {
		t.Fatalf("the denied run is %s, want completed", st)
	}
	c := app.login(runtime.RoleSupport)

	deniedText := "Expired: nobody decided in time, so the pending calls were denied automatically"
	recent := c.get("/runs/recent").doc(t)
	for uuid, want := range map[string][2]string{
		denied:    {"Completed after expiry", deniedText},
		cancelled: {"Cancelled on expiry", "Expired: nobody decided in time, so the run was cancelled automatically"},
		plain:     {"Completed", "Completed"},
	} {
		row := recent.Find(`[data-testid="recent-row"][data-run="` + uuid + `"]`)
		badge := row.Find(`[data-testid="status-badge"]`)
		if got := strings.TrimSpace(badge.Find(".badge__label").Text()); got != want[0] {
			t.Errorf("recent %s: badge %q, want %q", uuid, got, want[0])
		}
		if uuid != plain && strings.Contains(badge.AttrOr("class", ""), "success") {
			t.Errorf("recent %s: an expired run wears the success badge", uuid)
		}
		if got := strings.TrimSpace(row.Find(`[data-testid="recent-reason"]`).Text()); got != want[1] {
			t.Errorf("recent %s: reason %q, want %q", uuid, got, want[1])
		}
	}

	page := c.get("/runs/" + denied).doc(t)
	if got := strings.TrimSpace(page.Find(`[data-testid="summary-status"] .badge__label`).Text()); got != "Completed after expiry" {
		t.Errorf("run page badge %q", got)
	}
	if got := strings.TrimSpace(page.Find(`[data-testid="summary-reason"]`).Text()); got != deniedText {
		t.Errorf("run page reason %q", got)
	}
	var steps []string
	rows := timelineRows(t, c, denied)
	if all := strings.Join(rows, "\n"); !strings.Contains(all, "|Tool send_mail was not run: nobody decided before the wait expired, so it was denied automatically") ||
		strings.Contains(all, "send_mail answered with an error") {
		t.Errorf("the call the expiry denied is not shown as not run by the expiry:\n%s", all)
	}
	for _, row := range rows {
		if kind, _, _ := strings.Cut(row, "|"); kind == "reminder" || kind == "escalation" || kind == "expiry" || kind == "governance" {
			_, summary, _ := strings.Cut(row[len(kind)+1:], "|")
			steps = append(steps, kind+": "+summary)
		}
	}
	want := []string{
		"reminder: Reminder: the run is still waiting for a person",
		"escalation: Escalated: nobody decided in time, so the pause was escalated",
		"expiry: " + deniedText,
		"governance: Tool send_mail refused: nobody decided before the wait expired, so it was denied automatically",
	}
	if strings.Join(steps, "\n") != strings.Join(want, "\n") {
		t.Errorf("deadline rows:\n%s\nwant:\n%s", strings.Join(steps, "\n"), strings.Join(want, "\n"))
	}
	labels := page.Find(`[data-testid="timeline-row"] td[data-label="Event"]`).Map(textOf)
	for _, want := range []string{"Reminder", "Escalation", "Expiry"} {
		if !strings.Contains(strings.Join(labels, "|"), want) {
			t.Errorf("timeline event labels %q lack %q", labels, want)
		}
	}
}
