package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/views"
)

// home is the start page after signing in: how many runs wait for an approval and for input,
// and how many of them expire within the hour (each linking to that view of the inbox), then
// where else to go. The counts are the inbox's (what the viewer may see).
func (h *Handlers) home(c echo.Context) error {
	ctx, actor := c.Request().Context(), h.actor(c)
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	all := inboxQuery{per: defaultPerPage}
	soon := inboxQuery{per: defaultPerPage, filters: views.InboxFilters{Deadline: views.DeadlineSoon}}
	home := views.Home{ApprovalURL: all.url("approval", cursor{}), InputURL: all.url("input", cursor{}), SoonURL: soon.url("", cursor{})}
	for _, iq := range []inboxQuery{all, soon} {
		q, err := iq.waiting(h.now(), cfgs, actor.UserUID, 0)
		if err != nil {
			return err
		}
		counts, err := h.rt.Counts(ctx, actor, q)
		if err != nil {
			return err
		}
		home.Capped = home.Capped || counts.Capped
		if iq == soon {
			home.Soon = counts.Approval + counts.Input
		} else {
			home.Approval, home.Input = counts.Approval, counts.Input
		}
	}
	return h.render(c, http.StatusOK, views.HomePage(h.page(c, "Start", views.NavNone), home))
}
