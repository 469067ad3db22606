package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"runsdesk/runtime"
	"runsdesk/views"
)

// bulkPath is the confirmation page of runs.
func bulkPath(runs ...string) string {
	q := url.Values{views.FieldBulkRun: runs}
	return views.BulkPath + "?" + q.Encode()
}

// bulkFormOf loads the confirmation page of runs and returns its form's fields with decision
// set; the test fails unless the page shows want items.
func (c *client) bulkFormOf(decision string, want int, runs ...string) url.Values {
	c.t.Helper()
	res := c.get(bulkPath(runs...))
	doc := res.doc(c.t)
	if res.status != http.StatusOK || doc.Find(`[data-testid="bulk-item"]`).Length() != want {
		c.t.Fatalf("confirmation of %v: status %d, %d items, want 200 and %d; body %.400s", runs, res.status,
			doc.Find(`[data-testid="bulk-item"]`).Length(), want, res.body)
	}
	v := url.Values{views.FieldDecision: {decision}}
	doc.Find(`[data-testid="bulk-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		v.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	return v
}

// outcomes returns the outcome table of a decided batch, run → outcome.
func outcomes(t *testing.T, res response) map[string]string {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("batch: status %d, want 200; body %.400s", res.status, res.body)
	}
	out := map[string]string{}
	res.doc(t).Find(`[data-testid="bulk-outcome"]`).Each(func(_ int, s *goquery.Selection) {
		out[s.AttrOr("data-run", "")] = strings.TrimSpace(s.Find(".badge__label").Text())
	})
	return out
}

func TestBulkInboxGroupsOnlyCompatibleApprovals(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail1, mail2 := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail")
	fourEyes := app.pause(runtime.RoleAdmin, "foureyes")
	wipe := app.pause(runtime.RoleAdmin, "wipe")
	ask := app.pause(runtime.RoleAdmin, "ask")

	doc := app.login(runtime.RoleReviewer).get("/runs").doc(t)
	groupOf := map[string]string{}
	doc.Find(`[data-testid="inbox-row"]`).Each(func(_ int, s *goquery.Selection) {
		groupOf[s.AttrOr("data-run", "")] = s.Find(`[data-testid="bulk-select"]`).AttrOr("form", "")
	})
	if groupOf[mail1] == "" || groupOf[mail1] != groupOf[mail2] {
		t.Errorf("two mail approvals in groups %q and %q, want one group", groupOf[mail1], groupOf[mail2])
	}
	if g := groupOf[fourEyes]; g == "" || g == groupOf[mail1] {
		t.Errorf("the four-eyes mail approval is in group %q (mail: %q), want a group of its own", g, groupOf[mail1])
	}
	if g := groupOf[wipe]; g == "" || g == groupOf[mail1] || g == groupOf[fourEyes] {
		t.Errorf("the wipe approval is in group %q, want its own", g)
	}
	if g := groupOf[ask]; g != "" {
		t.Errorf("an input pause is selectable (group %q)", g)
	}
	forms := doc.Find(`form[data-testid="bulk-group"]`)
	if forms.Length() != 3 {
		t.Errorf("%d group forms, want 3", forms.Length())
	}
	forms.Each(func(_ int, f *goquery.Selection) {
		if f.AttrOr("method", "") != "get" || f.AttrOr("action", "") != views.BulkPath {
			t.Errorf("group form %s: method %q action %q", f.AttrOr("id", ""), f.AttrOr("method", ""), f.AttrOr("action", ""))
		}
	})
	if n := app.login(runtime.RoleSupport).get("/runs").doc(t).Find(`[data-testid="bulk-select"], [data-testid="bulk-group"]`).Length(); n != 0 {
		t.Errorf("support sees %d bulk controls, want none", n)
	}
}

func TestBulkBatchDecidesEachItemOnItsOwnDigest(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	fresh, decided, changed := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	form := rita.bulkFormOf(views.DecisionApprove, 3, fresh, decided, changed)
	page := rita.get(bulkPath(fresh, decided, changed)).doc(t)
	if args := page.Find(`[data-testid="bulk-item"] [data-testid="call-arguments"]`).Length(); args != 3 {
		t.Errorf("confirmation shows %d arguments, want each item's", args)
	}
	if n := len(form[views.FieldBulkItem]); n != 3 {
		t.Fatalf("the form carries %d items, want 3", n)
	}

	ada := app.login(runtime.RoleAdmin)
	wantSeeOther(t, "a single decision in between", ada.postForm("/runs/"+decided+"/approval", withCSRF(ada, ada.approvalFormOf(decided, "deny"))), "/runs/"+decided)
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_state = REPLACE(suspended_state, 'ops@example.com', 'other@example.com') WHERE uuid = ?`, changed)

	form.Set("_csrf", rita.token())
	form.Set(views.FieldReason, "batch reason")
	got := outcomes(t, rita.postForm(views.BulkPath, form))
	want := map[string]string{fresh: "approved", decided: "already handled", changed: "stale"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	if s := app.row(changed).Status; s != runtime.StatusWaitingApproval {
		t.Errorf("the stale run is %s, want still waiting", s)
	}
	approvals := 0
	for _, ev := range app.storedEvents(fresh) {
		if ev.Kind == runtime.EventApproval {
			approvals++
			if !strings.Contains(string(ev.Payload), fmt.Sprintf(`"decidedBy":%d`, app.uids[runtime.RoleReviewer])) || strings.Contains(string(ev.Payload), "batch reason") {
				t.Errorf("approval event %s: want rita as decider and no reason", ev.Payload)
			}
		}
	}
	if approvals != 1 {
		t.Errorf("%d approval events on the approved run, want 1", approvals)
	}
	rows, err := app.audit.RecentAudit(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	audited := map[string]string{}
	for _, r := range rows {
		if r.Action == actionApproval && r.ActorUID == app.uids[runtime.RoleReviewer] {
			audited[r.RunUUID] = r.Outcome + "/" + r.Reason
		}
	}
	if len(audited) != 3 || audited[fresh] != "approved/batch reason" {
		t.Errorf("audit rows of the batch %v, want one per item (the approved one with the reason)", audited)
	}

	before := len(app.storedEvents(fresh))
	again := outcomes(t, rita.postForm(views.BulkPath, form))
	if again[fresh] != "approved" || again[changed] != "stale" {
		t.Errorf("a repeated batch: %v, want the approved item replayed as approved", again)
	}
	if n := len(app.storedEvents(fresh)); n != before {
		t.Errorf("the replay changed the approved run's events: %d, had %d", n, before)
	}
}

func TestBulkDenyAllWithOneReason(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	a, b := app.pause(runtime.RoleAdmin, "wipe"), app.pause(runtime.RoleAdmin, "wipe")
	rita := app.login(runtime.RoleReviewer)
	form := rita.bulkFormOf(views.DecisionDeny, 2, a, b)
	form.Set("_csrf", rita.token())
	form.Set(views.FieldReason, "not today")
	if got := outcomes(t, rita.postForm(views.BulkPath, form)); got[a] != "denied" || got[b] != "denied" {
		t.Fatalf("outcomes %v, want both denied", got)
	}
	for _, uuid := range []string{a, b} {
		for _, ev := range app.storedEvents(uuid) {
			if ev.Kind == runtime.EventApproval && !strings.Contains(string(ev.Payload), `"approved":false`) {
				t.Errorf("%s: approval event %s, want a denial", uuid, ev.Payload)
			}
		}
		if got := rita.get("/runs/" + uuid).doc(t).Find(`[data-testid="timeline"]`).Text(); !strings.Contains(got, "reason: not today") {
			t.Errorf("%s: the timeline does not show the batch's reason: %q", uuid, strings.Join(strings.Fields(got), " "))
		}
	}
}

func TestBulkRefusesMixedSelections(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail, wipe, fourEyes := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "wipe"), app.pause(runtime.RoleAdmin, "foureyes")
	rita := app.login(runtime.RoleReviewer)
	for name, runs := range map[string][]string{"tools": {mail, wipe}, "policies": {mail, fourEyes}} {
		res := rita.get(bulkPath(runs...))
		if res.status != http.StatusBadRequest || !strings.Contains(res.body, "cannot be decided together") {
			t.Errorf("mixed %s: status %d, want 400 naming the rule; body %.300s", name, res.status, res.body)
		}
	}
	if res := rita.get(views.BulkPath); res.status != http.StatusBadRequest {
		t.Errorf("an empty selection: %d, want 400", res.status)
	}
	for _, item := range []string{"not-a-run 00ff", mail, mail + " "} {
		form := url.Values{"_csrf": {rita.token()}, views.FieldDecision: {views.DecisionApprove}, views.FieldBulkItem: {item}}
		if res := rita.postForm(views.BulkPath, form); res.status != http.StatusBadRequest {
			t.Errorf("posted item %q: %d, want 400", item, res.status)
		}
	}
	if s := app.row(mail).Status; s != runtime.StatusWaitingApproval {
		t.Errorf("after refused batches the run is %s, want still waiting", s)
	}
}

func TestBulkRefusesMoreThanFifty(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail := app.pause(runtime.RoleAdmin, "mail")
	runs := []string{mail}
	for len(runs) <= views.MaxBulkItems {
		runs = append(runs, uuid.NewString())
	}
	rita := app.login(runtime.RoleReviewer)
	res := rita.get(bulkPath(runs...))
	if res.status != http.StatusBadRequest || !strings.Contains(res.body, "At most 50 runs") {
		t.Errorf("51 selected: status %d, want 400 with the limit; body %.300s", res.status, res.body)
	}
	form := rita.bulkFormOf(views.DecisionApprove, 1, mail)
	item := form.Get(views.FieldBulkItem)
	for _, r := range runs[1:] {
		form.Add(views.FieldBulkItem, r+" "+strings.SplitN(item, " ", 2)[1])
	}
	form.Set("_csrf", rita.token())
	res = rita.postForm(views.BulkPath, form)
	if res.status != http.StatusBadRequest || !strings.Contains(res.body, "At most 50 runs") {
		t.Errorf("51 posted: status %d, want 400; body %.300s", res.status, res.body)
	}
	if s := app.row(mail).Status; s != runtime.StatusWaitingApproval {
		t.Errorf("after a refused batch the run is %s, want still waiting", s)
	}
}

func TestBulkItemsNotPermitted(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	refund1, refund2 := app.pause(runtime.RoleAdmin, "refund"), app.pause(runtime.RoleAdmin, "refund")
	own1, own2 := app.pause(runtime.RoleReviewer, "foureyes"), app.pause(runtime.RoleReviewer, "foureyes")
	rita := app.login(runtime.RoleReviewer)
	for reason, runs := range map[string][]string{"admin-only tool": {refund1, refund2}, "four-eyes: you started this run": {own1, own2}} {
		doc := rita.get(bulkPath(runs...)).doc(t)
		if n := doc.Find(`[data-testid="bulk-approve"]`).Length(); n != 0 {
			t.Errorf("%s: the confirmation offers Approve (%d buttons) though none may be approved", reason, n)
		}
		for _, r := range runs {
			if got := strings.TrimSpace(doc.Find(`[data-testid="bulk-deny-only-run"][data-run="` + r + `"]`).Text()); !strings.Contains(got, "("+reason+")") {
				t.Errorf("%s: the confirmation says of %s %q, want the reason before the confirmation", reason, r, got)
			}
		}
		form := rita.bulkFormOf(views.DecisionApprove, 2, runs...)
		form.Set("_csrf", rita.token())
		got := outcomes(t, rita.postForm(views.BulkPath, form))
		for _, r := range runs {
			if got[r] != reason {
				t.Errorf("%s: %s is %q, want the reason", reason, r, got[r])
			}
			if s := app.row(r).Status; s != runtime.StatusWaitingApproval {
				t.Errorf("%s: %s is %s, want still waiting", reason, r, s)
			}
		}
	}
	sam := app.login(runtime.RoleSupport)
	if res := sam.get(bulkPath(refund1)); res.status != http.StatusForbidden {
		t.Errorf("support's confirmation page: %d, want 403", res.status)
	}
}

// withCSRF sets c's CSRF token on form.
func withCSRF(c *client, form url.Values) url.Values {
	form.Set("_csrf", c.token())
	return form
}

func TestBrowserBulkAndDraftPagesPassTheNuHTMLChecker(t *testing.T) {
	t.Parallel()
	vnuCommand(t)
	app := newDeskApp(t)
	mail1, mail2, gone := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail")
	refund := app.pause(runtime.RoleAdmin, "refund")
	wipe := app.pause(runtime.RoleAdmin, "wipe")
	ask := app.pause(runtime.RoleAdmin, "ask")
	rita := app.login(runtime.RoleReviewer)
	m := &markupPages{t: t, pages: map[string]string{}}
	m.add("inbox-bulk-groups", rita.get("/runs"), http.StatusOK)
	form := rita.bulkFormOf(views.DecisionApprove, 3, mail1, mail2, gone)
	if _, err := app.rt.Cancel(t.Context(), app.deskActor(runtime.RoleAdmin), gone); err != nil {
		t.Fatal(err)
	}
	m.add("bulk-confirm-with-skipped", rita.get(bulkPath(mail1, mail2, gone)), http.StatusOK)
	m.add("bulk-confirm-not-permitted", rita.get(bulkPath(refund)), http.StatusOK)
	m.add("bulk-confirm-none-waiting", rita.get(bulkPath(gone)), http.StatusOK)
	form.Set("_csrf", rita.token())
	m.add("bulk-outcomes", rita.postForm(views.BulkPath, form), http.StatusOK)
	app.addTwoOfN()
	twoOfN := app.pause(runtime.RoleAdmin, "twoofn")
	m.add("bulk-outcomes-vote", rita.postForm(views.BulkPath, withCSRF(rita, rita.bulkFormOf(views.DecisionApprove, 1, twoOfN))), http.StatusOK)
	m.add("bulk-mixed", rita.get(bulkPath(wipe, refund)), http.StatusBadRequest)
	wantSeeOther(t, "save a draft", rita.saveDraft(ask, "x"), views.RunPath(ask))
	m.add("run-input-draft-restored", rita.get(views.RunPath(ask)), http.StatusOK)
	checkMarkup(t, m.pages)
}

// TestBulkConcurrentBatchesDecideEachItemOnce: two reviewers post batches of the same runs at
// once; every run is decided exactly once, and the other batch reports it already handled.
func TestBulkConcurrentBatchesDecideEachItemOnce(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	var runs []string
	for range 4 {
		runs = append(runs, app.pause(runtime.RoleAdmin, "mail"))
	}
	clients := []*client{app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)}
	forms := make([]url.Values, len(clients))
	for i, c := range clients {
		forms[i] = c.bulkFormOf(views.DecisionApprove, len(runs), runs...)
	}
	results := make([]map[string]string, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := c.postForm(views.BulkPath, forms[i])
			results[i] = map[string]string{}
			res.doc(t).Find(`[data-testid="bulk-outcome"]`).Each(func(_ int, s *goquery.Selection) {
				results[i][s.AttrOr("data-run", "")] = strings.TrimSpace(s.Find(".badge__label").Text())
			})
		}()
	}
	wg.Wait()
	for _, r := range runs {
		got := []string{results[0][r], results[1][r]}
		slices.Sort(got)
		if !reflect.DeepEqual(got, []string{"already handled", "approved"}) {
			t.Errorf("%s: outcomes %v, want one approved and one already handled", r, got)
		}
		approvals := 0
		for _, ev := range app.storedEvents(r) {
			if ev.Kind == runtime.EventApproval {
				approvals++
			}
		}
		if approvals != 1 {
			t.Errorf("%s: %d approval events, want 1", r, approvals)
		}
	}
}

// bulkItemOf is the item a confirmation page would carry for uuid: its run, the digest of its
// turn and of its definitions as an admin reads them now.
func (a *testApp) bulkItemOf(uuid string) string {
	a.t.Helper()
	v, err := a.rt.Get(a.t.Context(), a.deskActor(runtime.RoleAdmin), uuid)
	if err != nil || v.Pause == nil {
		a.t.Fatalf("get %s: %v", uuid, err)
	}
	return uuid + " " + v.Pause.Digest + " " + v.Pause.PinDigest
}

// TestBulkRefusesEdits: a hand-made batch of two runs with an identical turn (so one patch
// digest fits both) carrying edits is refused (422) and decides nothing: no tool runs, both
// keep waiting.
func TestBulkRefusesEdits(t *testing.T) {
	t.Parallel()
	app := newEditApp(t)
	a, b := app.pause(runtime.RoleAdmin, "edit"), app.pause(runtime.RoleAdmin, "edit")
	rita := app.login(runtime.RoleReviewer)
	form := rita.bulkFormOf(views.DecisionApprove, 2, a, b)
	edits := strings.ReplaceAll(`{"ID":[{"op":"replace","path":"/amount","value":1}]}`, "ID", app.callID(a))
	turn := strings.Fields(form[views.FieldBulkItem][0])[1]
	form.Set("_csrf", rita.token())
	form.Set(views.FieldEdits, edits)
	form.Set(views.FieldPatchDigest, patchDigestOf(t, turn, edits))
	res := rita.postForm(views.BulkPath, form)
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "A batch cannot edit arguments") {
		t.Errorf("a batch with edits: status %d, want 422 saying a batch cannot edit; body %.400s", res.status, res.body)
	}
	if ran := app.ran(); len(ran) != 0 {
		t.Errorf("the tool ran with %v", ran)
	}
	for _, r := range []string{a, b} {
		if s := app.row(r).Status; s != runtime.StatusWaitingApproval {
			t.Errorf("%s is %s, want still waiting for approval", r, s)
		}
	}
}

// TestBulkLabelsRunsWaitingForInput: a run waiting for input in a selection is left out of
// the confirmation page as "waiting for input", and a batch carrying it labels it so; it is
// not decided.
func TestBulkLabelsRunsWaitingForInput(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail, ask := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "ask")
	rita := app.login(runtime.RoleReviewer)
	page := rita.get(bulkPath(mail, ask)).doc(t)
	if got := page.Find(`[data-testid="bulk-skipped-run"][data-run="`+ask+`"]`).AttrOr("data-outcome", ""); got != "waiting for input" {
		t.Errorf("the input pause is left out as %q, want waiting for input; %q", got, strings.Join(strings.Fields(page.Find(`[data-testid="bulk-skipped"]`).Text()), " "))
	}
	form := rita.bulkFormOf(views.DecisionApprove, 1, mail, ask)
	form.Add(views.FieldBulkItem, app.bulkItemOf(ask))
	form.Set("_csrf", rita.token())
	got := outcomes(t, rita.postForm(views.BulkPath, form))
	if want := map[string]string{mail: "approved", ask: "waiting for input"}; !reflect.DeepEqual(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	if s := app.row(ask).Status; s != runtime.StatusWaitingInput {
		t.Errorf("the input pause is %s, want still waiting for input", s)
	}
}

// TestBulkDecideRefusesMixedGroups: a hand-made batch of runs on the turns shown but of
// different tools or policies is refused (400) as the confirmation page refuses it; nothing
// is decided.
func TestBulkDecideRefusesMixedGroups(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail, wipe, fourEyes := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "wipe"), app.pause(runtime.RoleAdmin, "foureyes")
	rita := app.login(runtime.RoleReviewer)
	for name, runs := range map[string][]string{"tools": {mail, wipe}, "policies": {mail, fourEyes}} {
		form := url.Values{"_csrf": {rita.token()}, views.FieldDecision: {views.DecisionApprove}, "idempotency_key": {"mixed-" + name}}
		for _, r := range runs {
			form.Add(views.FieldBulkItem, app.bulkItemOf(r))
		}
		res := rita.postForm(views.BulkPath, form)
		if res.status != http.StatusBadRequest || !strings.Contains(res.body, "cannot be decided together") {
			t.Errorf("mixed %s: status %d, want 400 naming the rule; body %.300s", name, res.status, res.body)
		}
	}
	for _, r := range []string{mail, wipe, fourEyes} {
		if s := app.row(r).Status; s != runtime.StatusWaitingApproval {
			t.Errorf("%s is %s, want still waiting for approval", r, s)
		}
	}
}
