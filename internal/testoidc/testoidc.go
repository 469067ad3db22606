// Package testoidc is an OpenID Connect provider for tests: discovery, JWKS (RS256, keys that
// rotate), an authorize endpoint that approves at once as the current person, and token and
// userinfo endpoints, with knobs for the failures a relying party must refuse.
package testoidc

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Person is who the provider signs in.
type Person struct {
	Subject           string
	PreferredUsername string
	Email             string
	EmailVerified     bool
	Groups            []string
	// AMR, when set, is the ID token's amr claim (how the provider authenticated them).
	AMR []string
}

// Knobs make the provider misbehave; the zero value behaves.
type Knobs struct {
	// Audience, when set, replaces the client id in the ID token's aud.
	Audience string
	// Expired issues ID tokens that expired an hour ago.
	Expired bool
	// Nonce, when set, replaces the sign-in's nonce in the ID token.
	Nonce string
	// GroupsInUserInfoOnly leaves the groups claim out of the ID token.
	GroupsInUserInfoOnly bool
	// UnpublishedKey signs ID tokens with a key JWKS never serves.
	UnpublishedKey bool
	// ShortLivedAccess issues access tokens that expire after a second, so a client must
	// use its refresh token.
	ShortLivedAccess bool
}

// Provider is a running test provider. Its methods are safe for concurrent use.
type Provider struct {
	// URL is the issuer.
	URL              string
	ClientID, Secret string
	mu               sync.Mutex
	key, unpublished *rsa.PrivateKey
	kid              string
	keys             int
	person           Person
	knobs            Knobs
	codes            map[string]grant
	access           map[string]string
	refresh          map[string]string
	people           map[string]Person
	revoked          map[string]bool
	fetches          int
	refreshes        int
	srv              *httptest.Server
}

type grant struct {
	subject, nonce, challenge, redirect string
}

// New starts a provider for client id and secret, closed when the test ends.
func New(t testing.TB, clientID, secret string) *Provider {
	t.Helper()
	p := &Provider{ClientID: clientID, Secret: secret, codes: map[string]grant{}, access: map[string]string{},
		refresh: map[string]string{}, people: map[string]Person{}, revoked: map[string]bool{}}
	p.rotate()
	p.unpublished = newKey()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /userinfo", p.userinfo)
	p.srv = httptest.NewServer(mux)
	p.URL = p.srv.URL
	t.Cleanup(p.srv.Close)
	return p
}

// SignInAs makes person the one the next authorize approves (and remembers their groups).
func (p *Provider) SignInAs(person Person) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.person = person
	p.people[person.Subject] = person
}

// SetGroups changes subject's groups as UserInfo reports them from now on.
func (p *Provider) SetGroups(subject string, groups []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	person := p.people[subject]
	person.Groups = groups
	p.people[subject] = person
}

// Revoke makes the provider refuse every token of subject.
func (p *Provider) Revoke(subject string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.revoked[subject] = true
}

// SetKnobs replaces the knobs.
func (p *Provider) SetKnobs(k Knobs) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.knobs = k
}

// Rotate replaces the signing key with a new one under a new key id; JWKS serves only it.
func (p *Provider) Rotate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rotate()
}

// Fetches is how many times JWKS was served.
func (p *Provider) Fetches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fetches
}

// Refreshes is how many times a refresh token was exchanged.
func (p *Provider) Refreshes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshes
}

// accessTTL is the access tokens' lifetime in seconds.
func (p *Provider) accessTTL() int {
	if p.knobs.ShortLivedAccess {
		return 1
	}
	return 3600
}

func (p *Provider) rotate() {
	p.keys++
	p.key, p.kid = newKey(), fmt.Sprintf("key-%d", p.keys)
}

func newKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
		"userinfo_endpoint": p.URL + "/userinfo", "jwks_uri": p.URL + "/jwks",
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	p.fetches++
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: "RS256", Use: "sig"}}}
	p.mu.Unlock()
	writeJSON(w, set)
}

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.ClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	code := random()
	p.mu.Lock()
	p.codes[code] = grant{subject: p.person.Subject, nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: redirect.String()}
	p.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.FormValue("client_id"), r.FormValue("client_secret")
	}
	if id != p.ClientID || secret != p.Secret {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.FormValue("grant_type") {
	case "authorization_code":
		g, ok := p.codes[r.FormValue("code")]
		delete(p.codes, r.FormValue("code"))
		sum := sha256.Sum256([]byte(r.FormValue("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.FormValue("redirect_uri") != g.redirect {
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		idToken, err := p.idToken(g)
		if err != nil {
			tokenError(w, http.StatusInternalServerError, "server_error")
			return
		}
		writeJSON(w, map[string]any{"access_token": p.issue(p.access, g.subject), "refresh_token": p.issue(p.refresh, g.subject),
			"token_type": "Bearer", "expires_in": p.accessTTL(), "id_token": idToken})
	case "refresh_token":
		sub, ok := p.refresh[r.FormValue("refresh_token")]
		if !ok || p.revoked[sub] {
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		p.refreshes++
		writeJSON(w, map[string]any{"access_token": p.issue(p.access, sub), "token_type": "Bearer", "expires_in": p.accessTTL()})
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
	}
}

func (p *Provider) issue(into map[string]string, subject string) string {
	t := random()
	into[t] = subject
	return t
}

func (p *Provider) idToken(g grant) (string, error) {
	person := p.people[g.subject]
	key, kid := p.key, p.kid
	if p.knobs.UnpublishedKey {
		key, kid = p.unpublished, "unpublished"
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", err
	}
	now := time.Now()
	exp := now.Add(time.Hour)
	if p.knobs.Expired {
		exp = now.Add(-time.Hour)
	}
	aud, nonce := p.ClientID, g.nonce
	if p.knobs.Audience != "" {
		aud = p.knobs.Audience
	}
	if p.knobs.Nonce != "" {
		nonce = p.knobs.Nonce
	}
	claims := map[string]any{"iss": p.URL, "sub": person.Subject, "aud": aud, "exp": exp.Unix(),
		"iat": now.Add(-2 * time.Hour).Unix(), "nonce": nonce, "preferred_username": person.PreferredUsername,
		"email": person.Email, "email_verified": person.EmailVerified}
	if !p.knobs.GroupsInUserInfoOnly {
		claims["groups"] = person.Groups
	}
	if len(person.AMR) > 0 {
		claims["amr"] = person.AMR
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

func (p *Provider) userinfo(w http.ResponseWriter, r *http.Request) {
	const prefix = "Bearer "
	auth := r.Header.Get("Authorization")
	p.mu.Lock()
	sub, ok := "", false
	if len(auth) > len(prefix) {
		sub, ok = p.access[auth[len(prefix):]]
	}
	person := p.people[sub]
	revoked := p.revoked[sub]
	p.mu.Unlock()
	if !ok || revoked {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	writeJSON(w, map[string]any{"sub": person.Subject, "preferred_username": person.PreferredUsername,
		"email": person.Email, "email_verified": person.EmailVerified, "groups": person.Groups})
}

func tokenError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
