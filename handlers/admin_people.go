package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/views"
)

// The flashes of the people page's changes.
const (
	msgPersonDisabled = "The person is disabled; their sessions have ended."
	msgPersonEnabled  = "The person may sign in again."
	msgPersonRole     = "The role is changed; the person's sessions have ended, so it applies at their next sign-in."
	msgPersonSessions = "Every session of the person has ended."
	msgPersonFactor   = "The second factor is removed and the person's sessions have ended; they may enrol again."
	msgUnchanged      = "Nothing changed: it was so already."
)

// personRoles are the roles the people page offers, in order.
var personRoles = []string{string(runtime.RoleAdmin), string(runtime.RoleReviewer), string(runtime.RoleSupport)}

// by is who asks, as the admin operations audit them: the request's actor and address.
func (h *Handlers) by(c echo.Context) admin.By {
	return admin.By{Actor: h.actor(c), IP: c.RealIP()}
}

// adminPeople is GET /admin/people (admins): every person with their role, last sign-in,
// second factor and state, the actions on each and the add form. Listing is audited
// (user_list), as `runsdesk user list` is.
func (h *Handlers) adminPeople(c echo.Context) error {
	return h.renderPeople(c, http.StatusOK, views.PersonForm{Role: string(runtime.RoleReviewer)}, nil)
}

// peopleAdd is POST /admin/people: adds a person (username, role, email) with a generated
// password, which the answer (200, the page) shows this once; it is never stored in clear,
// logged or audited. A refused form is 422 with the values as typed and why.
func (h *Handlers) peopleAdd(c echo.Context) error {
	form := views.PersonForm{Username: strings.TrimSpace(c.FormValue("username")), Role: c.FormValue("role"),
		Email: strings.TrimSpace(c.FormValue("email"))}
	added, err := h.admin.Add(c.Request().Context(), h.by(c),
		admin.NewPerson{Username: form.Username, Role: runtime.Role(form.Role), Email: form.Email})
	if err != nil {
		return h.peopleRefused(c, err, form)
	}
	secret := &views.Secret{Label: "Password", Owner: added.Username, Value: added.Password}
	return h.renderPeople(c, http.StatusOK, views.PersonForm{Role: form.Role}, secret)
}

// personResetPassword is POST /admin/people/password: gives the person (field username) a
// generated password, shown this once in the answer (200), ends their sessions, forgets their
// failed sign-ins and makes them choose a new password at their next sign-in.
func (h *Handlers) personResetPassword(c echo.Context) error {
	username := c.FormValue("username")
	_, reset, err := h.admin.ResetPassword(c.Request().Context(), h.by(c), username, "")
	if err != nil {
		return h.peopleRefused(c, err, views.PersonForm{Target: username})
	}
	secret := &views.Secret{Label: "New password", Owner: reset.Username, Value: reset.Password}
	return h.renderPeople(c, http.StatusOK, views.PersonForm{Role: string(runtime.RoleReviewer)}, secret)
}

// personDisable is POST /admin/people/disable: the person (field username) may no longer
// sign in and their sessions end. Leaving no enabled admin is refused (422).
func (h *Handlers) personDisable(c echo.Context) error {
	return h.personChange(c, flashPersonDisabled, func(ctx context.Context, by admin.By, username string) (bool, error) {
		_, err := h.admin.Disable(ctx, by, username)
		return true, err
	})
}

// personEnable is POST /admin/people/enable: a disabled person (field username) may sign in
// again.
func (h *Handlers) personEnable(c echo.Context) error {
	return h.personChange(c, flashPersonEnabled, func(ctx context.Context, by admin.By, username string) (bool, error) {
		_, changed, err := h.admin.Enable(ctx, by, username)
		return changed, err
	})
}

// personRole is POST /admin/people/role: the person (field username) gets the role (field
// role) and their sessions end. A bad role, or leaving no enabled admin, is refused (422).
func (h *Handlers) personRole(c echo.Context) error {
	role := c.FormValue("role")
	return h.personChange(c, flashPersonRole, func(ctx context.Context, by admin.By, username string) (bool, error) {
		_, changed, err := h.admin.SetRole(ctx, by, username, role)
		return changed, err
	})
}

// personEndSessions is POST /admin/people/sessions: every session of the person (field
// username) ends; they stay enabled.
func (h *Handlers) personEndSessions(c echo.Context) error {
	return h.personChange(c, flashPersonSessions, func(ctx context.Context, by admin.By, username string) (bool, error) {
		_, err := h.admin.EndSessions(ctx, by, username)
		return true, err
	})
}

// personResetFactor is POST /admin/people/mfa-reset: the person's (field username) second
// factor and recovery codes are removed and their sessions end.
func (h *Handlers) personResetFactor(c echo.Context) error {
	return h.personChange(c, flashPersonFactor, func(ctx context.Context, by admin.By, username string) (bool, error) {
		_, changed, err := h.admin.ResetFactor(ctx, by, username)
		return changed, err
	})
}

// personChange runs one change of a row's form on the person it names (field username): the
// people page follows (303) with done's flash, or flashUnchanged when it was so already; a
// refusal is 422 with the page saying why.
func (h *Handlers) personChange(c echo.Context, done flashCode,
	change func(ctx context.Context, by admin.By, username string) (bool, error)) error {
	username := c.FormValue("username")
	changed, err := change(c.Request().Context(), h.by(c), username)
	if err != nil {
		return h.peopleRefused(c, err, views.PersonForm{Role: string(runtime.RoleReviewer), Target: username, TargetRole: c.FormValue("role")})
	}
	if !changed {
		done = flashUnchanged
	}
	h.flash(c, done)
	return c.Redirect(http.StatusSeeOther, views.AdminPeoplePath)
}

// peopleRefused answers a refused form of the people page: 422, the page with form and why;
// any other error is the request's.
func (h *Handlers) peopleRefused(c echo.Context, err error, form views.PersonForm) error {
	var refused bool
	if form.Error, form.Field, refused = adminRefusal(err); !refused {
		return err
	}
	return h.renderPeople(c, http.StatusUnprocessableEntity, form, nil)
}

// adminRefusal is the sentence and field of err when it is an admin.Refusal, which a form
// shows beside its field; refused is false for any other error.
func adminRefusal(err error) (reason, field string, refused bool) {
	var r *admin.Refusal
	if !errors.As(err, &r) {
		return "", "", false
	}
	return sentence(r.Reason), r.Field, true
}

// renderPeople renders the people page with status, the add form and a secret to show once.
func (h *Handlers) renderPeople(c echo.Context, status int, form views.PersonForm, secret *views.Secret) error {
	people, err := h.admin.People(c.Request().Context(), h.by(c))
	if err != nil {
		return err
	}
	self := h.actor(c).UserUID
	v := views.People{Roles: personRoles, MFA: h.mfa.Factors != nil, Form: form, Secret: secret, Now: h.now()}
	for _, p := range people {
		v.Rows = append(v.Rows, views.PersonRow{Username: p.Username, Role: string(p.Role), Email: p.Email, Disabled: p.Disabled,
			MustChangePassword: p.MustChangePassword, MFA: p.MFA, LastLogin: unixTime(p.LastLogin), Created: unixTime(p.Created),
			Self: p.UID == self})
	}
	return h.render(c, status, views.PeoplePage(h.page(c, "People", views.NavPeople), v))
}
