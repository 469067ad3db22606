package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/views"
)

// msgTokenRevoked is the flash after a token was revoked.
const msgTokenRevoked = "The token is revoked; requests with it are refused."

// adminTokens is GET /admin/tokens (admins): every service account with its scopes, when it
// was created and last used, its expiry and state, revoke and rotate on each, and the create
// form. Listing is audited (token_list), as `runsdesk token list` is.
func (h *Handlers) adminTokens(c echo.Context) error {
	return h.renderTokens(c, http.StatusOK, views.TokenForm{}, nil)
}

// tokenCreate is POST /admin/tokens: creates a service account (name, scopes ticked, an
// optional expiry: 90d, 12h or a date, as `token create --expires` reads it); the answer (200,
// the page) shows its token this once; only its hash is stored. A refused form is 422 with the
// values as typed and why.
func (h *Handlers) tokenCreate(c echo.Context) error {
	form := views.TokenForm{Name: strings.TrimSpace(c.FormValue("name")), Expires: strings.TrimSpace(c.FormValue("expires"))}
	params, err := c.FormParams()
	if err != nil {
		return err
	}
	form.Scopes = params["scopes"]
	token, err := h.createToken(c, form)
	if err != nil {
		return h.tokensRefused(c, err, form)
	}
	return h.renderTokens(c, http.StatusOK, views.TokenForm{}, &views.Secret{Label: "Token", Owner: form.Name, Value: token})
}

// createToken reads the form's scopes and expiry and creates the service account.
func (h *Handlers) createToken(c echo.Context, form views.TokenForm) (string, error) {
	scopes, err := admin.ParseScopes(strings.Join(form.Scopes, ","))
	if err != nil {
		return "", err
	}
	expires, err := admin.ParseExpiry(form.Expires, h.now())
	if err != nil {
		return "", err
	}
	return h.admin.CreateToken(c.Request().Context(), h.by(c), admin.NewToken{Name: form.Name, Scopes: scopes, Expires: expires})
}

// tokenRevoke is POST /admin/tokens/revoke: the token of the service account (field name) is
// refused from now on; the tokens page follows (303) with a flash.
func (h *Handlers) tokenRevoke(c echo.Context) error {
	name := c.FormValue("name")
	_, changed, err := h.admin.RevokeToken(c.Request().Context(), h.by(c), name)
	if err != nil {
		return h.tokensRefused(c, err, views.TokenForm{Target: name})
	}
	if changed {
		h.flash(c, flashTokenRevoked)
	} else {
		h.flash(c, flashUnchanged)
	}
	return c.Redirect(http.StatusSeeOther, views.AdminTokensPath)
}

// tokenRotate is POST /admin/tokens/rotate: the service account (field name) gets a new
// token, shown this once in the answer (200), with the lifetime it was created with from now;
// the old one is refused and a revoked account works again.
func (h *Handlers) tokenRotate(c echo.Context) error {
	name := c.FormValue("name")
	sa, token, err := h.admin.RotateToken(c.Request().Context(), h.by(c), name)
	if err != nil {
		return h.tokensRefused(c, err, views.TokenForm{Target: name})
	}
	return h.renderTokens(c, http.StatusOK, views.TokenForm{}, &views.Secret{Label: "New token", Owner: sa.Name, Value: token})
}

// tokensRefused answers a refused form of the tokens page: 422, the page with form and why;
// any other error is the request's.
func (h *Handlers) tokensRefused(c echo.Context, err error, form views.TokenForm) error {
	var refused bool
	if form.Error, form.Field, refused = adminRefusal(err); !refused {
		return err
	}
	return h.renderTokens(c, http.StatusUnprocessableEntity, form, nil)
}

// renderTokens renders the tokens page with status, the create form and a token to show once.
func (h *Handlers) renderTokens(c echo.Context, status int, form views.TokenForm, secret *views.Secret) error {
	accounts, err := h.admin.ServiceAccounts(c.Request().Context(), h.by(c))
	if err != nil {
		return err
	}
	v := views.Tokens{AllScopes: runtime.Scopes(), Form: form, Secret: secret, Now: h.now()}
	for _, sa := range accounts {
		v.Rows = append(v.Rows, views.TokenRow{Name: sa.Name, Scopes: sa.Scopes, Created: unixTime(sa.Created),
			LastUsed: unixTime(sa.LastUsed), Expires: unixTime(sa.Expires), Disabled: sa.Disabled})
	}
	return h.render(c, status, views.TokensPage(h.page(c, "API tokens", views.NavTokens), v))
}
