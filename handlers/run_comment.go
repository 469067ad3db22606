package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/views"
)

// msgCommented is the flash of a stored comment.
const msgCommented = "Comment added. It is on the timeline below."

// runComment is POST /runs/:uuid/comments (comment: the text, idempotency_key): it stores a
// person's comment on the waiting run (Runtime.Comment; its @mentions are notified) and
// redirects (303) to the run page with a flash. A refused comment is answered with the run page
// itself, the text kept as typed in the comment form with the reason: 422 for text that cannot
// be stored (empty, too long, a mention of nobody), the refusal table's status otherwise (the
// run no longer waits: the text is still kept). A run the viewer may not read is 404.
func (h *Handlers) runComment(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	ctx, actor := c.Request().Context(), h.actor(c)
	text := c.FormValue(views.FieldComment)
	_, err = h.rt.Comment(ctx, actor, uuid, runtime.NewComment{Body: text, IdempotencyKey: c.FormValue("idempotency_key"), IP: c.RealIP()})
	if err == nil {
		h.flash(c, flashCommented)
		return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
	}
	re, row := refusal.OfError(err)
	if re == nil || errors.Is(err, runtime.ErrRunNotFound) || errors.Is(err, runtime.ErrRunStateUnavailable) {
		return err
	}
	view, err := h.rt.Get(ctx, actor, uuid)
	if err != nil {
		return err
	}
	status, why := row.Status, row.Message
	if re.Code == runtime.CodeInvalidRequest {
		status, why = http.StatusUnprocessableEntity, re.Message
	}
	box := &views.CommentBox{URL: views.CommentsPath(uuid), IdempotencyKey: newToken(), Text: text, Error: sentence(why)}
	return h.renderRunPage(c, status, view, runPageState{comment: box})
}

// sentence is s with a capital first letter and a final full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
