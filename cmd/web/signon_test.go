package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/internal/testoidc"
	"runsdesk/runtime"
)

const testRoles = "admin=desk-admins,reviewer=desk-reviewers|finance,support=desk-support"

func TestServeRefusesIncompleteSingleSignOn(t *testing.T) {
	t.Parallel()
	issuer := []string{"serve", "--oidc-issuer", "https://id.example.com"}
	cases := []struct {
		name string
		env  environ
		args []string
		want string
	}{
		{"client id without issuer", nil, []string{"serve", "--oidc-client-id", "desk"}, "need --oidc-issuer"},
		{"passwords off without issuer", nil, []string{"serve", "--password-signin=false"}, "--password-signin=false needs --oidc-issuer"},
		{"plain http issuer", nil, []string{"serve", "--oidc-issuer", "http://id.example.com", "--oidc-client-id", "desk", "--oidc-roles", testRoles}, "--oidc-issuer must be an https URL"},
		{"no client id", nil, append(issuer, "--oidc-roles", testRoles), "--oidc-issuer needs --oidc-client-id"},
		{"no roles", nil, append(issuer, "--oidc-client-id", "desk"), "--oidc-issuer needs --oidc-roles"},
		{"bad roles", nil, append(issuer, "--oidc-client-id", "desk", "--oidc-roles", "owner=desk-owners"), "--oidc-roles: \"owner=desk-owners\" is not ROLE=GROUP"},
		{"empty secret variable", nil, append(issuer, "--oidc-client-id", "desk", "--oidc-roles", testRoles, "--oidc-client-secret-env", "DESK_OIDC_SECRET"),
			"environment variable DESK_OIDC_SECRET is empty"},
		{"passwords off without break-glass user", nil, append(issuer, "--oidc-client-id", "desk", "--oidc-roles", testRoles, "--password-signin=false"),
			"--password-signin=false needs --break-glass-user"},
		{"roles from the environment", environ{"RUNSDESK_OIDC_ISSUER": "https://id.example.com", "RUNSDESK_OIDC_CLIENT_ID": "desk", "RUNSDESK_OIDC_ROLES": "admin"},
			[]string{"serve"}, "--oidc-roles: \"admin\" is not ROLE=GROUP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, c.env, nil, c.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", r.code, r.stderr, exitUsage, c.want)
			}
		})
	}
}

func TestServeSignsInWithTheProvider(t *testing.T) {
	t.Parallel()
	idp := testoidc.New(t, "desk", "s3cret-value")
	env := newDatabase(t)
	env["DESK_OIDC_SECRET"] = "s3cret-value"
	env["RUNSDESK_OIDC_ROLES"] = testRoles
	s := start(t, env, "serve", "--addr", "127.0.0.1:0", "--no-migrate", "--oidc-issuer", idp.URL,
		"--oidc-client-id", "desk", "--oidc-client-secret-env", "DESK_OIDC_SECRET", "--oidc-name", "Example ID")
	url := s.waitFor(t, regexp.MustCompile(`runsdesk is serving on (http://\S+)`))
	code, body := get(t, url+"login")
	if code != 200 || !strings.Contains(body, "Sign in with Example ID") || !strings.Contains(body, `data-testid="login-form"`) {
		t.Errorf("GET /login: %d, want the provider's button and the password form:\n%.2000s", code, body)
	}
	if strings.Contains(s.stdout.String()+s.stderr.String(), "s3cret-value") {
		t.Error("the client secret was printed")
	}
}

func TestUserResetPasswordRefusesAnOIDCAccount(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	ctx := context.Background()
	pool, err := db.Open(ctx, env["RUNSDESK_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, _, err := db.NewIdentities(pool, nil).SignIn(ctx, db.ExternalPerson{Issuer: "https://id.example.com", Subject: "s-1",
		Username: "olga", Role: runtime.RoleAdmin}, ""); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, env, strings.NewReader("a long new passphrase for olga\n"), "user", "reset-password", "olga")
	if r.code == exitOK || !strings.Contains(r.stderr, "signs in with the identity provider") {
		t.Errorf("user reset-password of an OIDC account: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

func TestServeRefusesABreakGlassUserWhoIsNotAnAdmin(t *testing.T) {
	t.Parallel()
	idp := testoidc.New(t, "desk", "")
	env := newDatabase(t)
	if r := cliRun(t, env, strings.NewReader("a long test passphrase for sam\n"), "user", "add", "--username", "sam", "--role", "support"); r.code != exitOK {
		t.Fatalf("user add: %+v", r)
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--no-migrate", "--oidc-issuer", idp.URL, "--oidc-client-id", "desk",
		"--oidc-roles", testRoles, "--password-signin=false", "--break-glass-user"}
	for user, want := range map[string]string{"sam": `"sam" must be an enabled admin`, "nobody": `there is no user "nobody"`} {
		if r := cliRun(t, env, nil, append(args, user)...); r.code != exitFailure || !strings.Contains(r.stderr, want) {
			t.Errorf("break-glass user %s: exit %d, stderr:\n%s\nwant %q", user, r.code, r.stderr, want)
		}
	}
}
