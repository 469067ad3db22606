package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"runsdesk/db"
	"runsdesk/handlers"
	"runsdesk/runtime"
	"runsdesk/sso"
)

// signOn is serve's single-sign-on configuration (--oidc-*, --password-signin,
// --break-glass-user).
type signOn struct {
	Issuer, ClientID, SecretEnv, Scopes, RoleClaim, Roles, Name string
	PasswordSignIn                                              bool
	BreakGlassUser                                              string
}

func (b *binder) signOn(s *signOn) {
	b.String(&s.Issuer, "oidc-issuer")
	b.String(&s.ClientID, "oidc-client-id")
	b.String(&s.SecretEnv, "oidc-client-secret-env")
	b.String(&s.Scopes, "oidc-scopes")
	b.String(&s.RoleClaim, "oidc-role-claim")
	b.String(&s.Roles, "oidc-roles")
	b.String(&s.Name, "oidc-name")
	b.Bool(&s.PasswordSignIn, "password-signin")
	b.String(&s.BreakGlassUser, "break-glass-user")
}

// config checks the settings and returns the provider's configuration (ok false: no single
// sign-on). The client secret is read from the environment variable --oidc-client-secret-env
// names; errors name the flag and the reason, never the secret.
func (s signOn) config(getenv func(string) string) (cfg sso.Config, ok bool, err error) {
	if s.Issuer == "" {
		switch {
		case s.ClientID != "" || s.SecretEnv != "" || s.Roles != "":
			return cfg, false, errors.New("--oidc-client-id, --oidc-client-secret-env and --oidc-roles need --oidc-issuer")
		case !s.PasswordSignIn:
			return cfg, false, errors.New("--password-signin=false needs --oidc-issuer: nobody could sign in")
		case s.BreakGlassUser != "":
			return cfg, false, errors.New("--break-glass-user only applies with --password-signin=false")
		}
		return cfg, false, nil
	}
	u, perr := url.Parse(s.Issuer)
	if perr != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		(u.Scheme != "https" && !(u.Scheme == "http" && loopback(net.JoinHostPort(u.Hostname(), "0")))) {
		return cfg, false, fmt.Errorf("--oidc-issuer must be an https URL (http only on a loopback address) without credentials, query or fragment, got %q", s.Issuer)
	}
	if s.ClientID == "" {
		return cfg, false, errors.New("--oidc-issuer needs --oidc-client-id")
	}
	secret := ""
	if s.SecretEnv != "" {
		if secret = getenv(s.SecretEnv); secret == "" {
			return cfg, false, fmt.Errorf("--oidc-client-secret-env: environment variable %s is empty or not set", s.SecretEnv)
		}
	}
	var scopes []string
	for sc := range strings.SplitSeq(s.Scopes, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			scopes = append(scopes, sc)
		}
	}
	if strings.TrimSpace(s.RoleClaim) == "" {
		return cfg, false, errors.New("--oidc-role-claim must name a claim, e.g. groups or realm_access.roles")
	}
	if s.Roles == "" {
		return cfg, false, errors.New("--oidc-issuer needs --oidc-roles, e.g. admin=desk-admins,reviewer=desk-reviewers,support=desk-support (there is no default role)")
	}
	roles, rerr := sso.ParseRoles(s.Roles)
	if rerr != nil {
		return cfg, false, fmt.Errorf("--oidc-roles: %w", rerr)
	}
	switch {
	case !s.PasswordSignIn && s.BreakGlassUser == "":
		return cfg, false, errors.New("--password-signin=false needs --break-glass-user, the admin who may still sign in with a password")
	case s.PasswordSignIn && s.BreakGlassUser != "":
		return cfg, false, errors.New("--break-glass-user only applies with --password-signin=false")
	}
	name := strings.TrimSpace(s.Name)
	if name == "" {
		name = u.Hostname()
	}
	return sso.Config{Issuer: s.Issuer, ClientID: s.ClientID, ClientSecret: secret, Scopes: scopes,
		RoleClaim: strings.TrimSpace(s.RoleClaim), Roles: roles, Name: name}, true, nil
}

// handlers discovers the provider and returns the handlers' single sign-on; cfg from config.
func (s signOn) handlers(ctx context.Context, cfg sso.Config, publicURL string) (handlers.SignOn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p, err := sso.New(ctx, cfg)
	if err != nil {
		return handlers.SignOn{}, fmt.Errorf("--oidc-issuer: %w", err)
	}
	return handlers.SignOn{Provider: p, PublicURL: publicURL, PasswordOff: !s.PasswordSignIn,
		BreakGlassUser: db.CanonicalUsername(s.BreakGlassUser)}, nil
}

// checkBreakGlass makes sure the break-glass user of --password-signin=false is an admin
// who can sign in with a password, so turning passwords off cannot lock every admin out.
func (s signOn) checkBreakGlass(ctx context.Context, pool *sql.DB) error {
	if s.PasswordSignIn || s.Issuer == "" {
		return nil
	}
	accounts, err := db.NewAccounts(pool, nil, 1)
	if err != nil {
		return err
	}
	u, err := accounts.AccountByUsername(ctx, s.BreakGlassUser)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return fmt.Errorf("--break-glass-user: there is no user %q (create one with runsdesk user add --role admin)", s.BreakGlassUser)
	case err != nil:
		return fmt.Errorf("--break-glass-user: %w", err)
	case u.Role != runtime.RoleAdmin || u.Disabled:
		return fmt.Errorf("--break-glass-user: %q must be an enabled admin", s.BreakGlassUser)
	}
	if _, err := db.NewIdentities(pool, nil).Linked(ctx, u.UID); err == nil {
		return fmt.Errorf("--break-glass-user: %q signs in with the identity provider and has no password", s.BreakGlassUser)
	}
	return nil
}
