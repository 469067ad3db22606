package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// runsRecent is GET /runs/recent: one keyset page of finished runs, newest first (?before=
// a page cursor, ?per= the page size; invalid values are 400). A store failure is an error
// page, never an empty list.
func (h *Handlers) runsRecent(c echo.Context) error {
	per, err := parsePer(c.QueryParam("per"))
	if err != nil {
		return err
	}
	before, err := parseCursor(c.QueryParam("before"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	runs, err := h.rt.Recent(ctx, h.actor(c), runtime.RecentQuery{BeforeFinishedAt: before.at, BeforeUID: before.uid, Limit: per + 1})
	if err != nil {
		return err
	}
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	r := views.Recent{Now: h.now()}
	if len(runs) > per {
		last := runs[per-1]
		r.NextURL = pageURL("/runs/recent", "before", per, cursor{at: last.FinishedAt, uid: last.UID})
		runs = runs[:per]
	}
	if before != (cursor{}) {
		r.FirstURL = pageURL("/runs/recent", "before", per, cursor{})
	}
	for _, run := range runs {
		r.Rows = append(r.Rows, views.RecentRow{
			UUID: run.UUID, Configuration: cfgs.label(run), Status: string(run.Status), Reason: run.TerminationReason, Expiry: run.Expiry,
			Created: unixTime(run.Crdate), Finished: unixTime(run.FinishedAt), Tokens: run.TotalTokens, Cost: run.EstimatedCost,
		})
	}
	return h.render(c, http.StatusOK, views.RecentPage(h.page(c, "Recent runs", views.NavRecent), r))
}
