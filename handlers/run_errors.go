package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// Messages about decisions and cancellations shown as flashes on the run page (see
// flashCatalogue: flashes are fixed texts; details such as who decided first, or which tool
// is restricted, are on the run page the flash is shown on).
const (
	msgApproved        = "Approval recorded; the run continues."
	msgDenied          = "Denial recorded; the run continues."
	msgFourEyes        = "This configuration requires a second person: you started this run, so you may deny it but not approve it."
	msgStaleTurn       = "The pending action changed — please re-review."
	msgNotAwaiting     = "This run is not waiting for an approval; nothing was decided."
	msgConfigGone      = "The run's configuration no longer exists, so the run cannot continue."
	msgNotAuditable    = "The approval could not be recorded, so it was not applied. Try again in a moment."
	msgMayNotDecide    = "You may not decide on this run."
	msgMayNotApprove   = "You may not approve this turn: one of its tools is restricted to admins or no longer enabled."
	msgAlreadyDecided  = "This run was already decided; its timeline shows by whom and when."
	msgCancelled       = "The run was cancelled."
	msgNotCancellable  = "This run had already finished; nothing was cancelled."
	msgMayNotCancel    = "You may cancel only runs you started."
	msgRunStarted      = "Run started. It is queued and begins shortly."
	msgBadRunReference = "There is no run at this address."
)

// approvalRefusal returns the flash for a refusal of an approval that left the run
// unchanged, or ok=false for anything else (unknown run, bad request, store failure), which
// belongs on the error page. The run page it redirects to says who decided first (timeline)
// or which tool is restricted (the card's note).
func approvalRefusal(err error) (flashCode, bool) {
	var re *runtime.Error
	if !errors.As(err, &re) {
		return "", false
	}
	switch re.Code {
	case runtime.CodeSelfApprovalDenied:
		return flashFourEyes, true
	case runtime.CodeStaleApprovalTurn:
		return flashStaleTurn, true
	case runtime.CodeRunAlreadyResuming:
		return flashAlreadyDecided, true
	case runtime.CodeApproverNotPermitted:
		return flashMayNotApprove, true
	case runtime.CodeRunAccessDenied:
		return flashMayNotDecide, true
	case runtime.CodeRunNotAwaitingApproval:
		return flashNotAwaiting, true
	case runtime.CodeRunConfigurationGone:
		return flashConfigGone, true
	case runtime.CodeCorruptSuspendedState:
		return flashUnreadable, true
	case runtime.CodeApprovalNotAuditable:
		return flashNotAuditable, true
	}
	return "", false
}

// refusedTo flashes code and redirects (303) to the run page.
func (h *Handlers) refusedTo(c echo.Context, uuid string, code flashCode) error {
	h.flash(c, code)
	return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
}

// runParam returns the :uuid path parameter, or a 404 error when it cannot be a run id.
func runParam(c echo.Context) (string, error) {
	uuid := c.Param("uuid")
	if !isRunID(uuid) {
		return "", publicError(http.StatusNotFound, "run_not_found", msgBadRunReference)
	}
	return uuid, nil
}

// isRunID reports whether s looks like a run uuid: 36 characters of hex digits and dashes.
func isRunID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for _, r := range s {
		if r != '-' && !isHex(r) {
			return false
		}
	}
	return true
}

func isHex(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}

// nameBook resolves user uids to the names the pages show.
type nameBook map[int64]string

// names looks up the usernames of uids. A lookup failure is logged and leaves the names
// unresolved ("user #7"): names are decoration, not worth failing a page for.
func (h *Handlers) names(ctx context.Context, uids ...int64) nameBook {
	if h.people == nil {
		return nameBook{}
	}
	m, err := h.people.Usernames(ctx, uids)
	if err != nil {
		h.log.WarnContext(ctx, "usernames not resolved", "error", err)
		return nameBook{}
	}
	return m
}

// actor returns the name of who acted: "service account <name>" when service names one, else
// uid's name (of).
func (b nameBook) actor(uid int64, service string) string {
	if service != "" {
		return "service account " + service
	}
	return b.of(uid)
}

// of returns uid's name: a username, "a service account" for uid 0, else "user #uid".
func (b nameBook) of(uid int64) string {
	if uid <= 0 {
		return "a service account"
	}
	if n, ok := b[uid]; ok {
		return n
	}
	return fmt.Sprintf("user #%d", uid)
}
