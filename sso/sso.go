// Package sso signs people in with an OpenID Connect provider: the authorization code flow
// with PKCE (S256), state and nonce, a verified ID token (issuer, audience, expiry, signature;
// an unknown key id fetches the provider's keys again), and the person's role from their groups,
// taken from the ID token or, when it has none, from UserInfo.
package sso

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"runsdesk/runtime"
)

// ErrNoRole is a person the provider vouches for who is in no group mapped to a role.
var ErrNoRole = errors.New("sso: the person is in no mapped group")

// Config is a provider and how its groups map to roles.
type Config struct {
	// Issuer is the provider's issuer URL; its discovery document is read at New.
	Issuer       string
	ClientID     string
	ClientSecret string
	// Scopes are requested at sign-in ("openid" is added when missing).
	Scopes []string
	// RoleClaim is the claim name or dotted path holding the person's groups.
	RoleClaim string
	Roles     RoleMap
	// Name is the provider's name on the sign-in button.
	Name string
}

// requestTimeout bounds each request to the provider (discovery, keys, token, UserInfo).
const requestTimeout = 10 * time.Second

// Provider is a discovered OpenID Connect provider. It is safe for concurrent use.
type Provider struct {
	cfg      Config
	client   *http.Client
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
}

// Pending is what a sign-in keeps between leaving for the provider and coming back: the
// state, the nonce and the PKCE verifier, all random.
type Pending struct {
	State, Nonce, Verifier string
}

// Tokens are the provider's tokens of a signed-in person, kept server-side only.
type Tokens struct {
	Access, Refresh string
	Expiry          time.Time
}

// Identity is who the provider says signed in. Role is set unless Finish returned ErrNoRole.
type Identity struct {
	Issuer, Subject   string
	PreferredUsername string
	Name              string
	Email             string
	EmailVerified     bool
	Role              runtime.Role
	Tokens            Tokens
	// MFA is set when the provider says it did multi-factor authentication: the ID token's
	// amr claim holds "mfa" or "otp".
	MFA bool
}

// New discovers the provider at cfg.Issuer; a provider that does not answer, or whose
// discovery document names another issuer, is an error.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if len(cfg.Roles) == 0 || cfg.RoleClaim == "" || cfg.ClientID == "" {
		return nil, errors.New("sso: client id, role claim and roles are required")
	}
	client := &http.Client{Timeout: requestTimeout}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, client), cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("sso: discover %s: %w", cfg.Issuer, err)
	}
	v := p.Verifier(&oidc.Config{ClientID: cfg.ClientID, SupportedSigningAlgs: []string{oidc.RS256, oidc.ES256, oidc.PS256}})
	return &Provider{cfg: cfg, client: client, provider: p, verifier: v}, nil
}

// Name is the provider's name for the sign-in button.
func (p *Provider) Name() string { return p.cfg.Name }

// Issuer is the issuer URL accounts are keyed by together with the subject.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

// NewPending returns a fresh random state, nonce and PKCE verifier.
func NewPending() Pending {
	return Pending{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier()}
}

// AuthCodeURL is where the person goes to sign in; the provider sends them back to redirect.
func (p *Provider) AuthCodeURL(redirect string, pending Pending) string {
	return p.oauth(redirect).AuthCodeURL(pending.State, oidc.Nonce(pending.Nonce), oauth2.S256ChallengeOption(pending.Verifier))
}

// Finish exchanges code for tokens, verifies the ID token and its nonce, and maps the person's
// groups to a role. A person in no mapped group is ErrNoRole (with the Identity filled in but
// Role empty); any other failure means nobody signed in.
func (p *Provider) Finish(ctx context.Context, redirect, code string, pending Pending) (Identity, error) {
	ctx = oidc.ClientContext(ctx, p.client)
	tok, err := p.oauth(redirect).Exchange(ctx, code, oauth2.VerifierOption(pending.Verifier))
	if err != nil {
		return Identity{}, fmt.Errorf("sso: exchange the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, errors.New("sso: the token response has no ID token")
	}
	idt, err := p.verifier.Verify(ctx, raw)
	if err != nil {
		return Identity{}, fmt.Errorf("sso: ID token: %w", err)
	}
	if idt.Nonce != pending.Nonce {
		return Identity{}, errors.New("sso: ID token: nonce does not match the sign-in's")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("sso: ID token claims: %w", err)
	}
	id := Identity{Issuer: idt.Issuer, Subject: idt.Subject, Tokens: tokensOf(tok)}
	id.PreferredUsername, _ = claims["preferred_username"].(string)
	id.Name, _ = claims["name"].(string)
	id.Email, _ = claims["email"].(string)
	id.EmailVerified = claims["email_verified"] == true || claims["email_verified"] == "true"
	amr, _ := claimPath(claims, "amr")
	id.MFA = slices.Contains(amr, "mfa") || slices.Contains(amr, "otp")
	groups, found := claimPath(claims, p.cfg.RoleClaim)
	if !found {
		if groups, err = p.userInfoGroups(ctx, oauth2.StaticTokenSource(tok), idt.Subject); err != nil {
			return Identity{}, err
		}
	}
	role, ok := p.cfg.Roles.Role(groups)
	if !ok {
		return id, ErrNoRole
	}
	id.Role = role
	return id, nil
}

// Recheck asks the provider again about subject with their stored tokens (UserInfo with the
// access token, refreshed with the refresh token when it has expired) and returns their role
// now and the tokens to keep. A provider that no longer answers for them is an error; a person
// no longer in a mapped group is ErrNoRole.
func (p *Provider) Recheck(ctx context.Context, subject string, t Tokens) (runtime.Role, Tokens, error) {
	ctx = oidc.ClientContext(ctx, p.client)
	src := p.oauth("").TokenSource(ctx, &oauth2.Token{AccessToken: t.Access, RefreshToken: t.Refresh, Expiry: t.Expiry, TokenType: "Bearer"})
	tok, err := src.Token()
	if err != nil {
		return "", t, fmt.Errorf("sso: refresh the tokens: %w", err)
	}
	groups, err := p.userInfoGroups(ctx, oauth2.StaticTokenSource(tok), subject)
	if err != nil {
		return "", t, err
	}
	role, ok := p.cfg.Roles.Role(groups)
	if !ok {
		return "", tokensOf(tok), ErrNoRole
	}
	return role, tokensOf(tok), nil
}

// userInfoGroups reads the role claim from UserInfo, which must be about subject.
func (p *Provider) userInfoGroups(ctx context.Context, src oauth2.TokenSource, subject string) ([]string, error) {
	info, err := p.provider.UserInfo(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("sso: userinfo: %w", err)
	}
	if info.Subject != subject {
		return nil, errors.New("sso: userinfo is about another subject")
	}
	var claims map[string]any
	if err := info.Claims(&claims); err != nil {
		return nil, fmt.Errorf("sso: userinfo claims: %w", err)
	}
	groups, _ := claimPath(claims, p.cfg.RoleClaim)
	return groups, nil
}

func (p *Provider) oauth(redirect string) *oauth2.Config {
	scopes := p.cfg.Scopes
	if !slices.Contains(scopes, oidc.ScopeOpenID) {
		scopes = append([]string{oidc.ScopeOpenID}, scopes...)
	}
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret,
		Endpoint: p.provider.Endpoint(), RedirectURL: redirect, Scopes: scopes}
}

func tokensOf(t *oauth2.Token) Tokens {
	return Tokens{Access: t.AccessToken, Refresh: t.RefreshToken, Expiry: t.Expiry}
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
