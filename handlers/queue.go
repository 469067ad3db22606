package handlers

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/runtime/queue"
	"runsdesk/views"
)

// QueueHealth reads the queue's health (*db.Store): as of now (unix seconds), with the
// per-person figures when people is set. A store failure is an error.
type QueueHealth interface {
	QueueHealth(ctx context.Context, now int64, people bool) (queue.Health, error)
}

// seesQueue reports whether a may open the queue's health: admins and reviewers (the
// deciders' group of routes.go), so the header offers it to them alone.
func seesQueue(a runtime.Actor) bool {
	return a.Role == runtime.RoleAdmin || a.Role == runtime.RoleReviewer
}

// queueHealth is GET /queue: the queue's health per configuration and tool, read afresh (a
// few grouped index ranges: db.Store.QueueHealth), with the per-person figures for admins
// only. Every figure links to the inbox filtered to it. 404 without Config.Queue; a store
// failure is a 503 page.
func (h *Handlers) queueHealth(c echo.Context) error {
	if h.queue == nil {
		return echo.ErrNotFound
	}
	ctx, actor, now := c.Request().Context(), h.actor(c), h.now()
	admin := actor.Role == runtime.RoleAdmin
	health, err := h.queue.QueueHealth(ctx, now.Unix(), admin)
	if err != nil {
		return unavailable(err)
	}
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	q := views.Queue{Now: now, ShowPeople: admin}
	for _, f := range health.Rows {
		q.Rows = append(q.Rows, queueRow(f, cfgs))
	}
	if admin {
		q.People = make([]views.QueuePerson, 0, len(health.People))
		for _, p := range health.People {
			q.People = append(q.People, queuePerson(p))
		}
	}
	return h.render(c, http.StatusOK, views.QueuePage(h.page(c, "Queue health", views.NavQueue), q))
}

// queueLinks builds the inbox addresses of one row's figures: the inbox filtered to the
// row's configuration and tool, narrowed further per figure. ok is false for a row whose
// configuration the catalog no longer has (the inbox's filter would refuse it) or whose tool
// the filter cannot name: its figures are not linked.
type queueLinks struct {
	base views.InboxFilters
	ok   bool
}

func newQueueLinks(k queue.Key, cfgs configIndex) queueLinks {
	l := queueLinks{base: views.InboxFilters{Configuration: k.Configuration, Tool: k.Tool}, ok: true}
	if k.Configuration != "" {
		_, l.ok = cfgs.byIdentifier(k.Configuration)
	}
	if k.Tool != "" && !runtime.ToolFilter(k.Tool) {
		l.ok = false
	}
	return l
}

// url is the inbox address of kind ("", approval, input) under f's filters and the row's.
func (l queueLinks) url(kind string, f views.InboxFilters) string {
	if !l.ok {
		return ""
	}
	f.Configuration, f.Tool = l.base.Configuration, l.base.Tool
	return inboxQuery{filters: f, per: defaultPerPage}.url(kind, cursor{})
}

// count is a count linked to the inbox of kind under f.
func (l queueLinks) count(n int64, kind string, f views.InboxFilters) views.QueueFigure {
	return views.QueueFigure{Text: views.Count(n), URL: l.url(kind, f)}
}

// waitedBucket is a waiting-age percentile, linked to the runs waiting at least as long as
// its bucket's lower bound (the inbox's "waiting longer than"), so the link lists the runs at
// or beyond it.
func (l queueLinks) waitedBucket(h queue.Histogram, q float64) views.QueueFigure {
	bound, over, ok := h.Quantile(q)
	f := views.QueueFigure{Text: views.QueueBound(bound, over, ok)}
	if ok {
		f.URL = l.url("", views.InboxFilters{Older: olderThan(queue.LowerBound(bound, over))})
	}
	return f
}

// decidedBucket is a time-to-decision percentile, linked to the row's inbox (not linked when
// nothing was counted).
func (l queueLinks) decidedBucket(h queue.Histogram, q float64) views.QueueFigure {
	bound, over, ok := h.Quantile(q)
	f := views.QueueFigure{Text: views.QueueBound(bound, over, ok)}
	if ok {
		f.URL = l.url("", views.InboxFilters{})
	}
	return f
}

// olderThan is the inbox's "waiting longer than" value for s seconds, in the largest whole
// unit (m, h, d); "" below a minute (no filter).
func olderThan(s int64) string {
	switch {
	case s >= 86400 && s%86400 == 0:
		return strconv.FormatInt(s/86400, 10) + "d"
	case s >= 3600 && s%3600 == 0:
		return strconv.FormatInt(s/3600, 10) + "h"
	case s >= 60:
		return strconv.FormatInt(s/60, 10) + "m"
	}
	return ""
}

// queueRow is one row of figures as the page shows it.
func queueRow(f queue.Figures, cfgs configIndex) views.QueueRow {
	l := newQueueLinks(f.Key, cfgs)
	row := views.QueueRow{Configuration: "All configurations", Tool: f.Tool, Level: 0,
		Approval: l.count(f.WaitingApproval, "approval", views.InboxFilters{}),
		Input:    l.count(f.WaitingInput, "input", views.InboxFilters{}),
		AgeP50:   l.waitedBucket(f.Ages, 0.5), AgeP90: l.waitedBucket(f.Ages, 0.9),
		Expiring:  l.count(f.ExpiringSoon, "", views.InboxFilters{Deadline: views.DeadlineSoon}),
		Escalated: l.count(f.Escalated, "", views.InboxFilters{Deadline: views.DeadlineEscalated}),
		Failed:    l.count(f.FailedNotifications, "", views.InboxFilters{}),
		Day:       l.count(f.Decisions(true), "", views.InboxFilters{}),
		Week:      l.count(f.Decisions(false), "", views.InboxFilters{}),
	}
	if f.OldestSince > 0 {
		row.Oldest, row.OldestURL = time.Unix(f.OldestSince, 0), l.url("", views.InboxFilters{})
	}
	for class, times := range map[queue.Class]*views.QueueTimes{queue.ClassPerson: &row.People, queue.ClassRule: &row.Rules, queue.ClassExpiry: &row.Expiry} {
		*times = views.QueueTimes{P50: l.decidedBucket(f.Decided[class].Times, 0.5), P90: l.decidedBucket(f.Decided[class].Times, 0.9)}
	}
	if f.Configuration != "" {
		row.Level, row.Configuration = 1, f.Configuration
		if c, ok := cfgs.byIdentifier(f.Configuration); ok && c.Name != "" {
			row.Configuration = c.Name
		}
	}
	if f.Tool != "" {
		row.Level = 2
	}
	return row
}

// queuePerson is one person's figures, linked to the inbox of the runs assigned to them.
func queuePerson(p queue.Person) views.QueuePerson {
	bound, over, ok := p.Times.Quantile(0.5)
	out := views.QueuePerson{Name: p.Name, Decisions: views.QueueFigure{Text: views.Count(p.Decisions)},
		Median: views.QueueFigure{Text: views.QueueBound(bound, over, ok)}}
	if p.Name == "" {
		out.Name = "person " + views.Count(p.UID)
		return out
	}
	link := inboxQuery{filters: views.InboxFilters{Assignee: p.Name}, per: defaultPerPage}.url("", cursor{})
	out.Decisions.URL, out.Median.URL = link, link
	return out
}
