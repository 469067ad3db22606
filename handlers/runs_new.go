package handlers

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// actionRunStart is the audit action of a run started from the web UI.
const actionRunStart = "run_start"

// runsNew is GET /runs/new: the start-a-run form (configuration select, prompt).
func (h *Handlers) runsNew(c echo.Context) error {
	cfgs, err := h.configurations(c.Request().Context())
	if err != nil {
		return err
	}
	f := views.NewRunForm{Configurations: cfgs.startable(), Configuration: c.QueryParam("configuration"), MaxPrompt: runtime.MaxPromptBytes}
	return h.render(c, http.StatusOK, views.NewRunPage(h.page(c, "Start a run", views.NavStart), f))
}

// runsCreate is POST /runs: it validates the form (a configuration the catalog holds now, not
// an external one; a
// non-empty prompt of at most runtime.MaxPromptBytes), starts the run and redirects (303) to
// its page with a flash. An invalid form is re-rendered with 422, the values as typed and an
// error per field.
func (h *Handlers) runsCreate(c echo.Context) error {
	ctx := c.Request().Context()
	cfgs, err := h.currentConfigurations(ctx)
	if err != nil {
		return err
	}
	f := views.NewRunForm{Configurations: cfgs.startable(), Configuration: c.FormValue("configuration"),
		Prompt: c.FormValue("prompt"), MaxPrompt: runtime.MaxPromptBytes, Errors: map[string]string{}}
	if cfg, ok := cfgs.byIdentifier(f.Configuration); !ok || cfg.IsExternal() {
		f.Errors["configuration"] = "Choose a configuration."
	}
	switch p := strings.TrimSpace(f.Prompt); {
	case p == "":
		f.Errors["prompt"] = "Enter a prompt."
	case len(p) > runtime.MaxPromptBytes || !utf8.ValidString(p):
		f.Errors["prompt"] = "The prompt is too long: at most 32 KiB of text."
	}
	if len(f.Errors) == 0 {
		run, err := h.rt.Start(ctx, h.actor(c), f.Configuration, f.Prompt)
		var re *runtime.Error
		switch {
		case err == nil:
			h.auditRun(c, actionRunStart, run.UUID, outcomeSuccess, "configuration "+f.Configuration)
			h.flash(c, flashRunStarted)
			return c.Redirect(http.StatusSeeOther, views.RunPath(run.UUID))
		case errors.As(err, &re) && re.Code == runtime.CodeConfigurationNotFound:
			f.Errors["configuration"] = "Choose a configuration."
		case errors.As(err, &re) && re.Code == runtime.CodeInvalidRequest:
			f.Errors["prompt"] = "Enter a prompt of at most 32 KiB of text."
		default:
			return err
		}
	}
	return h.render(c, http.StatusUnprocessableEntity, views.NewRunPage(h.page(c, "Start a run", views.NavStart), f))
}
