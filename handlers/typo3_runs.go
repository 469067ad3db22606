package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/typo3/extruns"
	"runsdesk/views"
)

// TYPO3Runs reads the runs of the TYPO3 extension nr-llm, read only (*extruns.Runs): a page
// of those waiting for approval or input, oldest first, and one run by uuid (an unknown uuid
// is an error wrapping runtime.ErrNotFound). A store failure is an error.
type TYPO3Runs interface {
	Waiting(ctx context.Context, page extruns.Page) (extruns.List, error)
	Find(ctx context.Context, uuid string) (extruns.Run, error)
}

// checkBackendURL refuses a TYPO3 backend address that is set but is not an absolute http(s)
// URL with a host.
func checkBackendURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return errors.New("handlers: TYPO3BackendURL must be an absolute http(s) URL without credentials")
	}
	return nil
}

// typo3RunsList is GET /typo3/runs: one keyset page (?after= a page cursor, ?per= the page
// size; invalid values are 400) of the TYPO3 extension's runs waiting for approval or input,
// oldest first, read only. A store failure is a 503 page, never an empty list.
func (h *Handlers) typo3RunsList(c echo.Context) error {
	per, err := parsePer(c.QueryParam("per"))
	if err != nil {
		return err
	}
	after, err := parseCursor(c.QueryParam("after"))
	if err != nil {
		return err
	}
	list, err := h.typo3.Waiting(c.Request().Context(), extruns.Page{After: extruns.Cursor{Crdate: after.at, UID: after.uid}, Size: per})
	if err != nil {
		return unavailable(err)
	}
	r := views.TYPO3Runs{BackendURL: h.backend, Now: h.now()}
	if list.More {
		r.NextURL = pageURL(views.TYPO3RunsPath, "after", per, cursor{at: list.Next.Crdate, uid: list.Next.UID})
	}
	if after != (cursor{}) {
		r.FirstURL = pageURL(views.TYPO3RunsPath, "after", per, cursor{})
	}
	for _, s := range list.Runs {
		r.Rows = append(r.Rows, views.TYPO3RunRow{UUID: s.UUID, Status: string(s.Status), Configuration: s.ConfigurationIdentifier,
			Owner: s.BeUser, Since: unixTime(s.WaitingSince())})
	}
	return h.render(c, http.StatusOK, views.TYPO3RunsPage(h.page(c, "TYPO3 runs", views.NavTYPO3Runs), r))
}

// typo3RunShow is GET /typo3/runs/:uuid: one run of the TYPO3 extension, any status, read
// only (typo3RunView). An unknown uuid is 404; a uuid the table holds twice is a 500 (the
// log names it); a store failure is a 503 page.
func (h *Handlers) typo3RunShow(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	run, err := h.typo3.Find(c.Request().Context(), uuid)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return publicError(http.StatusNotFound, "run_not_found", msgBadRunReference)
	case errors.Is(err, extruns.ErrAmbiguous):
		return fmt.Errorf("TYPO3 run page: %w", err)
	case err != nil:
		return unavailable(err)
	}
	v := typo3RunView(run, h.backend, h.now())
	return h.render(c, http.StatusOK, views.TYPO3RunPage(h.page(c, "TYPO3 run "+views.ShortID(run.UUID), views.NavTYPO3Runs), v))
}

// typo3RunView is the run as its page shows it: a sealed payload as sealed by the extension,
// an unreadable one with the reason, a cleartext one as its pending calls (arguments shown as
// on runsdesk's own cards) and, for an input pause, the form of its schema.
func typo3RunView(run extruns.Run, backend string, now time.Time) views.TYPO3Run {
	v := views.TYPO3Run{BackendURL: backend, UUID: run.UUID, Status: string(run.Status), Configuration: run.ConfigurationIdentifier,
		Owner: run.BeUser, Created: unixTime(run.Crdate), Now: now}
	if run.Status.Waiting() {
		v.Since = unixTime(run.WaitingSince())
	}
	switch p := run.Payload; p.Kind {
	case extruns.PayloadSealed:
		v.Kind = views.TYPO3PayloadSealed
	case extruns.PayloadUnreadable:
		v.Kind, v.Unreadable = views.TYPO3PayloadUnreadable, p.Reason
	case extruns.PayloadCleartext:
		v.Kind = views.TYPO3PayloadApproval
		for _, call := range p.Calls {
			v.Calls = append(v.Calls, callArguments(call.Tool, call.Arguments))
		}
		if in := p.Input; in != nil {
			v.Kind, v.InputTool, v.Fields, v.NoForm = views.TYPO3PayloadInput, in.Tool, in.Fields, in.NoForm
		}
	}
	return v
}
