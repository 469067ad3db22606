package handlers

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// The inbox's introduction shows once per browser: inboxIntroCookie marks that it was shown,
// for a year.
const (
	inboxIntroCookie    = "runsdesk_inbox_intro"
	inboxIntroCookieAge = 365 * 24 * 60 * 60
)

// runsList is GET /runs, the inbox: one keyset page of waiting runs, longest-waiting first,
// one row each, under the filters of the query string (see parseInboxQuery; invalid values
// are 400), with the waiting counts per kind. A store failure is an error page (503), never
// an empty inbox; a run whose state cannot be read is listed as unreadable.
func (h *Handlers) runsList(c echo.Context) error {
	iq, err := parseInboxQuery(c.QueryParams())
	if err != nil {
		return err
	}
	ctx, actor := c.Request().Context(), h.actor(c)
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	assignee, err := h.assigneeUID(ctx, iq.filters.Assignee)
	if err != nil {
		return err
	}
	q, err := iq.waiting(h.now(), cfgs, actor.UserUID, assignee)
	if err != nil {
		return err
	}
	page, err := h.rt.Inbox(ctx, actor, q, cfgs.list)
	if err != nil {
		return err
	}
	counts, err := h.rt.Counts(ctx, actor, q)
	if err != nil {
		return err
	}
	in := views.Inbox{
		Filters: iq.filters, Configurations: cfgs.options(), Tools: cfgs.toolOptions(iq.filters.Tool),
		Ages: ageOptions(iq.filters.Older), ApprovalCount: counts.Approval, InputCount: counts.Input, CountsCapped: counts.Capped,
		AllURL: iq.url("", cursor{}), ApprovalURL: iq.url("approval", cursor{}), InputURL: iq.url("input", cursor{}),
		MineURL: iq.urlWhose(iq.filters.Kind, views.AssignedMe, cursor{}), UnassignedURL: iq.urlWhose(iq.filters.Kind, views.AssignedNone, cursor{}),
		EveryoneURL: iq.urlWhose(iq.filters.Kind, "", cursor{}),
		ReadOnly:    !runtime.MayAct(actor, runtime.ActionApprove, runtime.Run{}), Now: h.now(),
		ClearURL: inboxQuery{filters: views.InboxFilters{Kind: iq.filters.Kind}, per: iq.per}.url(iq.filters.Kind, cursor{}),
		Intro:    h.firstInboxVisit(c), SelectAll: c.QueryParam("select") == views.SelectAllValue,
		SelectNoneURL: iq.url(iq.filters.Kind, iq.after), PageQuery: pageQuery(iq.url(iq.filters.Kind, iq.after)),
	}
	if len(page) > iq.per {
		last := page[iq.per-1].Run
		at := last.SuspendedAt
		if iq.filters.ByExpiry() {
			at = last.ExpiresAt
		}
		in.NextURL = iq.url(iq.filters.Kind, cursor{at: at, uid: last.UID})
		page = page[:iq.per]
	}
	if iq.after != (cursor{}) {
		in.FirstURL = iq.url(iq.filters.Kind, cursor{})
	}
	names := nameBook{}
	for _, v := range page {
		if v.Run.StartedBy != "" {
			names[v.Run.BeUser] = v.Run.StartedBy
		}
	}
	in.Rows = make([]views.InboxRow, 0, len(page))
	for _, v := range page {
		in.Rows = append(in.Rows, h.inboxRow(v, cfgs, names))
	}
	if !in.ReadOnly {
		in.Groups = bulkGroups(page, in.Rows, cfgs)
	}
	return h.render(c, http.StatusOK, views.InboxPage(h.page(c, "Inbox", views.NavInbox), in))
}

// inboxRow describes a waiting run as the inbox lists it; names are the usernames the list
// query read beside the runs (a run a service account started names that account). A run is
// listed as unreadable when its run page could show neither its calls nor, for an input
// pause, a form (Pause.Form, compiled once per schema by the runtime) or a remote server's
// confirmation.
func (h *Handlers) inboxRow(v runtime.RunView, cfgs configIndex, names nameBook) views.InboxRow {
	run := v.Run
	row := views.InboxRow{RunUUID: run.UUID, Status: string(run.Status), Subject: run.Subject, Configuration: cfgs.label(run),
		StartedBy: names.actor(run.BeUser, run.StartedByService), Since: unixTime(run.SuspendedAt), Unreadable: unreadable(v),
		Expires: unixTime(run.ExpiresAt), Escalated: run.Escalated}
	if run.Assignee != 0 {
		row.Assignee = run.AssigneeName
	}
	if !row.Unreadable && run.Status == runtime.StatusWaitingInput {
		row.Unreadable = v.Pause.Form == nil && (v.Pause.Elicitation == nil || !v.Pause.Elicitation.Confirmation)
	}
	if run.PendingTools != "" {
		row.Tools = strings.Split(run.PendingTools, ",")
	}
	return row
}

// firstInboxVisit reports whether this browser has not been shown the inbox's introduction
// yet, and remembers that it now has in a cookie, so reading the inbox never rewrites the
// session row.
func (h *Handlers) firstInboxVisit(c echo.Context) bool {
	if ck, err := c.Cookie(inboxIntroCookie); err == nil && ck.Value == "seen" {
		return false
	}
	c.SetCookie(&http.Cookie{Name: inboxIntroCookie, Value: "seen", Path: "/runs", MaxAge: inboxIntroCookieAge,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	return true
}

// pageQuery is the query of the inbox address page as hidden fields, in a stable order.
func pageQuery(page string) []views.HiddenValue {
	u, err := url.Parse(page)
	if err != nil {
		return nil
	}
	q := u.Query()
	keys := slices.Sorted(maps.Keys(q))
	var out []views.HiddenValue
	for _, k := range keys {
		for _, v := range q[k] {
			out = append(out, views.HiddenValue{Name: k, Value: v})
		}
	}
	return out
}
