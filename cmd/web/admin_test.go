package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"runsdesk/app"
	"runsdesk/db"
)

// webDesk serves the real web UI and API (app.New, as serve wires them) on env's database and
// returns its base URL.
func webDesk(t *testing.T, env environ) string {
	t.Helper()
	a, err := app.New(t.Context(), app.Config{DB: store(t, env).pool, Getenv: env.get})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// addUser adds username with role and password through `user add`.
func addUser(t *testing.T, env environ, username, role, password string) {
	t.Helper()
	if r := cliRun(t, env, strings.NewReader(password+"\n"), "user", "add", "--username", username, "--role", role); r.code != exitOK {
		t.Fatalf("user add %s: %+v", username, r)
	}
}

// signIn posts the sign-in form and returns the status and Location of the answer.
func (b *browserless) signIn(username, password string) (int, string) {
	b.t.Helper()
	form := b.form("/login", "/login")
	form.Set("username", username)
	form.Set("password", password)
	return b.post("/login", form)
}

// status returns the status and Location of GET path.
func (b *browserless) status(path string) (int, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// wantSignedIn fails the test unless b's session opens the inbox.
func wantSignedIn(t *testing.T, what string, b *browserless) {
	t.Helper()
	if code, loc := b.status("/runs"); code != http.StatusOK {
		t.Errorf("%s: GET /runs answered %d (Location %q), want 200", what, code, loc)
	}
}

// wantSignedOut fails the test unless b's session is sent to the sign-in page.
func wantSignedOut(t *testing.T, what string, b *browserless) {
	t.Helper()
	if code, loc := b.status("/runs"); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
		t.Errorf("%s: GET /runs answered %d (Location %q), want 303 to /login", what, code, loc)
	}
}

// auditTrail returns "actor action outcome reason" of every audit row written by the CLI,
// oldest first.
func auditTrail(t *testing.T, env environ) []string {
	t.Helper()
	rows, err := db.NewAudit(store(t, env).pool, nil).RecentAudit(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range slices.Backward(rows) {
		if strings.HasPrefix(r.ActorName, "cli:") {
			out = append(out, r.ActorName+" "+r.Action+" "+r.Outcome+" "+r.Reason)
		}
	}
	return out
}

// listRow returns the cells of the row of `user list` or `token list` output whose first
// cell is name.
func listRow(t *testing.T, out, name string) []string {
	t.Helper()
	for _, l := range lines(out) {
		if f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1); f[0] == name {
			return f
		}
	}
	t.Fatalf("no row %q in\n%s", name, out)
	return nil
}

const (
	annPassword = "ann's long and private passphrase"
	bobPassword = "bob's long and private passphrase"
)

func TestUserListShowsEveryPersonAndTheirState(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "ann", "admin", annPassword)
	addUser(t, env, "bob", "support", bobPassword)
	newBrowserless(t, webDesk(t, env)).login("bob", bobPassword)

	r := cliRun(t, env, nil, "user", "list")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("user list: %+v", r)
	}
	if got := lines(r.stdout); len(got) != 3 || !regexp.MustCompile(`^USERNAME\s+ROLE\s+DISABLED\s+MUST-CHANGE\s+LAST LOGIN\s+CREATED$`).MatchString(got[0]) {
		t.Errorf("user list:\n%s\nwant a header and two rows", r.stdout)
	}
	rfc3339 := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	ann, bob := listRow(t, r.stdout, "ann"), listRow(t, r.stdout, "bob")
	if !slices.Equal(ann[:5], []string{"ann", "admin", "no", "no", "never"}) || !rfc3339.MatchString(ann[5]) {
		t.Errorf("ann's row %q", ann)
	}
	if !slices.Equal(bob[:4], []string{"bob", "support", "no", "no"}) || !rfc3339.MatchString(bob[4]) || !rfc3339.MatchString(bob[5]) {
		t.Errorf("bob's row %q, want his last sign-in recorded", bob)
	}
	if strings.Contains(r.stdout, "argon2") {
		t.Error("user list prints a password hash")
	}
	want := []string{
		`cli:runsdesk:user user_add success user "ann" (uid 1): role admin`,
		`cli:runsdesk:user user_add success user "bob" (uid 2): role support`,
		"cli:runsdesk:user user_list success users listed: 2",
	}
	if got := auditTrail(t, env); !slices.Equal(got, want) {
		t.Errorf("audit = %q", got)
	}
}

func TestUserCommandsRefuseAnUnknownUser(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	for _, args := range [][]string{
		{"user", "disable", "nobody"}, {"user", "enable", "nobody"}, {"user", "role", "nobody", "admin"},
		{"user", "reset-password", "nobody"}, {"user", "end-sessions", "nobody"},
	} {
		r := cliRun(t, env, nil, args...)
		want := "runsdesk " + args[0] + " " + args[1] + `: user "nobody" not found` + "\n"
		if r.code != exitFailure || r.stderr != want || r.stdout != "" {
			t.Errorf("%v: %+v, want exit 1 and %q", args, r, want)
		}
	}
	want := []string{
		`cli:runsdesk:user user_disable failure user "nobody" not found`,
		`cli:runsdesk:user user_enable failure user "nobody" not found`,
		`cli:runsdesk:user user_role failure user "nobody" not found`,
		`cli:runsdesk:user user_reset_password failure user "nobody" not found`,
		`cli:runsdesk:user user_end_sessions failure user "nobody" not found`,
	}
	if got := auditTrail(t, env); !slices.Equal(got, want) {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

func TestUserDisableEndsSessionsAndEnableLetsThePersonBack(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "bob", "reviewer", bobPassword)
	base := webDesk(t, env)
	first, second := newBrowserless(t, base), newBrowserless(t, base)
	first.login("bob", bobPassword)
	second.login("bob", bobPassword)
	wantSignedIn(t, "before user disable", first)

	r := cliRun(t, env, nil, "user", "disable", "bob")
	if r.code != exitOK || r.stdout != "User \"bob\" disabled; their sessions have ended.\n" {
		t.Fatalf("user disable: %+v", r)
	}
	wantSignedOut(t, "first session after user disable", first)
	wantSignedOut(t, "second session after user disable", second)
	if code, _ := newBrowserless(t, base).signIn("bob", bobPassword); code != http.StatusUnprocessableEntity {
		t.Errorf("sign-in of a disabled user: %d, want 422", code)
	}
	if row := listRow(t, cliRun(t, env, nil, "user", "list").stdout, "bob"); row[2] != "yes" {
		t.Errorf("user list row %q, want disabled", row)
	}

	r = cliRun(t, env, nil, "user", "enable", "bob")
	if r.code != exitOK || r.stdout != "User \"bob\" enabled; they may sign in again.\n" {
		t.Fatalf("user enable: %+v", r)
	}
	wantSignedOut(t, "a session ended by user disable, after user enable", first)
	again := newBrowserless(t, base)
	again.login("bob", bobPassword)
	wantSignedIn(t, "a new sign-in after user enable", again)
	r = cliRun(t, env, nil, "user", "enable", "bob")
	if r.code != exitOK || r.stdout != "User \"bob\" is not disabled; nothing changed.\n" {
		t.Errorf("user enable of an enabled user: %+v", r)
	}

	uid := regexp.MustCompile(`\(uid \d+\)`).FindString(strings.Join(auditTrail(t, env), "\n"))
	want := []string{
		"cli:runsdesk:user user_add success user \"bob\" " + uid + ": role reviewer",
		"cli:runsdesk:user user_disable success user \"bob\" " + uid,
		"cli:runsdesk:user user_list success users listed: 1",
		"cli:runsdesk:user user_enable success user \"bob\" " + uid,
	}
	if got := auditTrail(t, env); uid == "" || !slices.Equal(got, want) {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

func TestUserEndSessionsSignsThePersonOutEverywhere(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "bob", "support", bobPassword)
	addUser(t, env, "ann", "admin", annPassword)
	base := webDesk(t, env)
	bob, ann := newBrowserless(t, base), newBrowserless(t, base)
	bob.login("bob", bobPassword)
	ann.login("ann", annPassword)

	r := cliRun(t, env, nil, "user", "end-sessions", "bob")
	if r.code != exitOK || r.stdout != "Every session of \"bob\" has ended.\n" {
		t.Fatalf("user end-sessions: %+v", r)
	}
	wantSignedOut(t, "bob's session after user end-sessions", bob)
	wantSignedIn(t, "ann's session after bob's sessions ended", ann)
	bob.login("bob", bobPassword)
	wantSignedIn(t, "bob signing in again", bob)
	if got := auditTrail(t, env); len(got) != 3 || !strings.HasPrefix(got[2], `cli:runsdesk:user user_end_sessions success user "bob" (uid `) {
		t.Errorf("audit = %q", got)
	}
}

func TestUserRoleChangesTheRoleAndEndsSessions(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "bob", "support", bobPassword)
	base := webDesk(t, env)
	bob := newBrowserless(t, base)
	bob.login("bob", bobPassword)
	if code, _ := bob.status("/runs/new"); code != http.StatusForbidden {
		t.Fatalf("support on /runs/new: %d, want 403", code)
	}

	r := cliRun(t, env, nil, "user", "role", "bob", "reviewer")
	if r.code != exitOK || r.stdout != "User \"bob\" now has the role reviewer; their sessions have ended.\n" {
		t.Fatalf("user role: %+v", r)
	}
	wantSignedOut(t, "after the role change", bob)
	bob.login("bob", bobPassword)
	if code, _ := bob.status("/runs/new"); code != http.StatusOK {
		t.Errorf("reviewer on /runs/new: %d, want 200", code)
	}
	if row := listRow(t, cliRun(t, env, nil, "user", "list").stdout, "bob"); row[1] != "reviewer" {
		t.Errorf("user list row %q, want role reviewer", row)
	}
	r = cliRun(t, env, nil, "user", "role", "bob", "reviewer")
	if r.code != exitOK || !strings.Contains(r.stdout, "already has the role reviewer; nothing changed") {
		t.Errorf("same role again: %+v", r)
	}
	wantSignedIn(t, "after a role change that changed nothing", bob)
	if got := auditTrail(t, env); len(got) < 2 || !regexp.MustCompile(`^cli:runsdesk:user user_role success user "bob" \(uid \d+\): role support → reviewer$`).MatchString(got[1]) {
		t.Errorf("audit = %q", got)
	}
}

// TestLostAdminPasswordIsRecoveredWithResetPassword: the admin forgot their password and is
// locked out by failed attempts; `user reset-password admin` prints a new one, the old one is
// refused, the new one signs in and leads straight to choosing a password of their own.
func TestLostAdminPasswordIsRecoveredWithResetPassword(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	const forgotten = "the admin's forgotten passphrase"
	addUser(t, env, "admin", "admin", forgotten)
	base := webDesk(t, env)
	old := newBrowserless(t, base)
	old.login("admin", forgotten)
	guess := newBrowserless(t, base)
	for range db.DefaultLoginLimits().AccountFailures {
		if code, _ := guess.signIn("admin", "a wrong guess at the password"); code != http.StatusUnprocessableEntity {
			t.Fatalf("wrong guess: %d, want 422", code)
		}
	}
	if code, _ := guess.signIn("admin", forgotten); code != http.StatusTooManyRequests {
		t.Fatalf("after %d failures: %d, want 429", db.DefaultLoginLimits().AccountFailures, code)
	}

	r := cliRun(t, env, nil, "user", "reset-password", "admin")
	if r.code != exitOK {
		t.Fatalf("user reset-password: %+v", r)
	}
	out := lines(r.stdout)
	if len(out) != 1 || len(out[0]) < 30 {
		t.Fatalf("stdout = %q, want one line holding the new password", r.stdout)
	}
	password := out[0]
	if strings.Contains(r.stderr, password) || !strings.Contains(r.stderr, "must choose a new password at their next sign-in") ||
		!strings.Contains(r.stderr, "shown only this once") {
		t.Errorf("stderr = %q", r.stderr)
	}
	wantSignedOut(t, "the admin's session from before the reset", old)
	if row := listRow(t, cliRun(t, env, nil, "user", "list").stdout, "admin"); row[3] != "yes" {
		t.Errorf("user list row %q, want must-change yes", row)
	}

	b := newBrowserless(t, base)
	if code, _ := b.signIn("admin", forgotten); code != http.StatusUnprocessableEntity {
		t.Errorf("the old password after the reset: %d, want 422", code)
	}
	if code, loc := b.signIn("admin", password); code != http.StatusSeeOther || loc != "/account/password" {
		t.Fatalf("the new password: %d Location %q, want 303 /account/password", code, loc)
	}
	if code, loc := b.status("/runs"); code != http.StatusSeeOther || loc != "/account/password" {
		t.Errorf("/runs before choosing a password: %d Location %q, want 303 /account/password", code, loc)
	}
	const chosen = "a passphrase the admin will remember"
	form := b.form("/account/password", "/account/password")
	form.Set("current", password)
	form.Set("new", chosen)
	form.Set("confirm", chosen)
	if code, loc := b.post("/account/password", form); code != http.StatusSeeOther || loc != "/" {
		t.Fatalf("choosing a password: %d Location %q, want 303 /", code, loc)
	}
	wantSignedIn(t, "after choosing a password", b)
	if row := listRow(t, cliRun(t, env, nil, "user", "list").stdout, "admin"); row[3] != "no" {
		t.Errorf("user list row %q after the change, want must-change no", row)
	}
	if got := auditTrail(t, env); len(got) < 2 || !regexp.MustCompile(`^cli:runsdesk:user user_reset_password success user "admin" \(uid \d+\)$`).MatchString(got[1]) ||
		strings.Contains(strings.Join(got, "\n"), password) {
		t.Errorf("audit = %q", got)
	}
}

func TestUserResetPasswordReadsAPipedPassword(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "bob", "support", bobPassword)
	const piped = "a piped replacement passphrase"
	r := cliRun(t, env, strings.NewReader(piped+"\n"), "user", "reset-password", "bob")
	if r.code != exitOK || r.stdout != "" || strings.Contains(r.stderr, piped) {
		t.Fatalf("user reset-password with a piped password: %+v", r)
	}
	if a := authenticate(t, env, "bob", piped); !a.PasswordChangeRequired {
		t.Errorf("actor %+v: want a required password change", a)
	}
	r = cliRun(t, env, strings.NewReader("short\n"), "user", "reset-password", "bob")
	if r.code != exitFailure || !strings.Contains(r.stderr, "at least 15 characters") || strings.Contains(r.stderr, "short\n") {
		t.Errorf("a short piped password: %+v", r)
	}
	authenticate(t, env, "bob", piped)
}

// apiStatus returns the status of GET path on the API with token.
func apiStatus(t *testing.T, base, token, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1"+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := checkedClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestTokenCommands(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	base := webDesk(t, env)
	run := "/runs/" + newRun(t, env, false)
	r := cliRun(t, env, nil, "token", "create", "--name", "ci", "--scopes", "read,cancel")
	if r.code != exitOK {
		t.Fatalf("token create: %+v", r)
	}
	first := strings.TrimSpace(r.stdout)
	if r := cliRun(t, env, nil, "token", "create", "--name", "batch", "--scopes", "run"); r.code != exitOK {
		t.Fatalf("token create: %+v", r)
	}

	r = cliRun(t, env, nil, "token", "list")
	if r.code != exitOK || !regexp.MustCompile(`^NAME\s+SCOPES\s+CREATED\s+LAST USED\s+DISABLED\s+EXPIRES\n`).MatchString(r.stdout) || len(lines(r.stdout)) != 3 {
		t.Fatalf("token list: %+v", r)
	}
	if row := listRow(t, r.stdout, "ci"); row[1] != "read,cancel" || row[3] != "never" || row[4] != "no" {
		t.Errorf("ci before use: %q", row)
	}
	if code := apiStatus(t, base, first, run); code != http.StatusOK {
		t.Fatalf("the first token: %d, want 200", code)
	}
	r = cliRun(t, env, nil, "token", "list")
	if row := listRow(t, r.stdout, "ci"); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT`).MatchString(row[3]) {
		t.Errorf("ci after an API request: %q, want its last use recorded", row)
	}
	var hash string
	if err := store(t, env).pool.QueryRow(`SELECT token_hash FROM tx_runsdesk_service_account WHERE name = 'ci'`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.stdout, first) || strings.Contains(r.stdout, hash) || strings.Contains(r.stdout, db.TokenPrefix) {
		t.Errorf("token list prints the token or its hash:\n%s", r.stdout)
	}

	r = cliRun(t, env, nil, "token", "rotate", "ci")
	second := strings.TrimSpace(r.stdout)
	if r.code != exitOK || len(lines(r.stdout)) != 1 || !strings.HasPrefix(second, db.TokenPrefix) || second == first ||
		strings.Contains(r.stderr, second) || !strings.Contains(r.stderr, `New token of service account "ci" (scopes read, cancel); the old one no longer works`) {
		t.Fatalf("token rotate: %+v", r)
	}
	if code := apiStatus(t, base, first, run); code != http.StatusUnauthorized {
		t.Errorf("the old token after token rotate: %d, want 401", code)
	}
	if code := apiStatus(t, base, second, run); code != http.StatusOK {
		t.Errorf("the new token after token rotate: %d, want 200", code)
	}

	r = cliRun(t, env, nil, "token", "revoke", "ci")
	if r.code != exitOK || r.stdout != "The token of service account \"ci\" is revoked; requests with it are refused.\n" {
		t.Fatalf("token revoke: %+v", r)
	}
	if code := apiStatus(t, base, second, run); code != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d, want 401", code)
	}
	if row := listRow(t, cliRun(t, env, nil, "token", "list").stdout, "ci"); row[4] != "yes" {
		t.Errorf("ci after token revoke: %q, want disabled", row)
	}
	r = cliRun(t, env, nil, "token", "revoke", "ci")
	if r.code != exitOK || !strings.Contains(r.stdout, "already revoked; nothing changed") {
		t.Errorf("token revoke twice: %+v", r)
	}
	r = cliRun(t, env, nil, "token", "rotate", "ci")
	third := strings.TrimSpace(r.stdout)
	if r.code != exitOK || !strings.Contains(r.stderr, `Service account "ci" was revoked; it works again with the new token`) {
		t.Fatalf("token rotate of a revoked account: %+v", r)
	}
	if code := apiStatus(t, base, third, run); code != http.StatusOK {
		t.Errorf("the token of a revoked account rotated: %d, want 200", code)
	}

	for _, args := range [][]string{{"token", "revoke", "nobody"}, {"token", "rotate", "nobody"}} {
		r := cliRun(t, env, nil, args...)
		if want := "runsdesk " + args[0] + " " + args[1] + `: service account "nobody" not found` + "\n"; r.code != exitFailure || r.stderr != want || r.stdout != "" {
			t.Errorf("%v: %+v, want exit 1 and %q", args, r, want)
		}
	}
	want := []string{
		`cli:runsdesk:token token_create success service account "ci": scopes read,cancel; never expires`,
		`cli:runsdesk:token token_create success service account "batch": scopes run; never expires`,
		"cli:runsdesk:token token_list success service accounts listed: 2",
		"cli:runsdesk:token token_list success service accounts listed: 2",
		`cli:runsdesk:token token_rotate success service account "ci"`,
		`cli:runsdesk:token token_revoke success service account "ci"`,
		"cli:runsdesk:token token_list success service accounts listed: 2",
		`cli:runsdesk:token token_rotate success service account "ci" (was revoked)`,
		`cli:runsdesk:token token_revoke failure service account "nobody" not found`,
		`cli:runsdesk:token token_rotate failure service account "nobody" not found`,
	}
	got := auditTrail(t, env)
	if !slices.Equal(got, want) {
		t.Errorf("audit = %q\nwant %q", got, want)
	}
	for _, row := range got {
		for _, secret := range []string{first, second, third, hash} {
			if strings.Contains(row, secret) {
				t.Errorf("audit row %q holds a token or hash", row)
			}
		}
	}
}

// TestAdminCommandsTakeFlagsAfterTheirArguments: `user disable bob --log-level warn` parses
// like `user disable --log-level warn bob`.
func TestAdminCommandsTakeFlagsAfterTheirArguments(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "bob", "support", bobPassword)
	dsn := env["RUNSDESK_DSN"]
	r := cliRun(t, environ{}, nil, "user", "end-sessions", "bob", "--dsn", dsn, "--log-level", "warn")
	if r.code != exitOK {
		t.Errorf("flags after the argument: %+v", r)
	}
	r = cliRun(t, environ{}, nil, "user", "end-sessions", "--dsn="+dsn, "--", "bob")
	if r.code != exitOK {
		t.Errorf("the argument after --: %+v", r)
	}
}

// TestEmptyListsSaySo: every list command with nothing to list says so in the same words
// (nothing: "No <what it lists>."), not with a bare header; as JSON it prints [], as CSV the
// header row, as JSON Lines nothing. (Listing the audit trail is itself audited, so the later
// audit lists filter on an action that has not happened.)
func TestEmptyListsSaySo(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "list"}, "No audit rows.\n"},
		{[]string{"audit", "list", "--action", "login", "--format", "csv"}, "id,time,actor,actor_uid,ip,action,run,outcome,reason,chain_seq\n"},
		{[]string{"audit", "list", "--action", "login", "--format", "jsonl"}, ""},
		{[]string{"audit", "list", "--action", "login", "--format", "json"}, "[]\n"},
		{[]string{"token", "list"}, "No service accounts.\n"},
		{[]string{"token", "list", "--format", "json"}, "[]\n"},
		{[]string{"user", "list"}, "No users.\n"},
		{[]string{"user", "list", "--format=json"}, "[]\n"},
		{[]string{"rules", "list"}, "No standing approvals.\n"},
		{[]string{"rules", "list", "--format", "json"}, "[]\n"},
		{[]string{"notifications", "list"}, "No notifications.\n"},
		{[]string{"notifications", "list", "--failed"}, "No failed notifications.\n"},
		{[]string{"notifications", "list", "--format", "json"}, "[]\n"},
		{[]string{"keys", "status"}, "Active key: \"\"\nNo sealed rows.\n"},
		{[]string{"keys", "status", "--format", "json"}, "[]\n"},
	} {
		if r := cliRun(t, env, nil, c.args...); r.code != exitOK || r.stdout != c.want {
			t.Errorf("%v: exit %d, stdout %q, want %q; stderr %s", c.args, r.code, r.stdout, c.want, r.stderr)
		}
	}
}

// TestUserCommandsKeepAnEnabledAdmin: `user disable` and `user role` refuse to leave no enabled
// admin, as the people page does, and change nothing; with a second admin they may.
func TestUserCommandsKeepAnEnabledAdmin(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "ann", "admin", annPassword)
	for _, args := range [][]string{{"user", "disable", "ann"}, {"user", "role", "ann", "support"}} {
		if r := cliRun(t, env, nil, args...); r.code != exitFailure || !strings.Contains(r.stderr, "this would leave no enabled admin") {
			t.Errorf("%v: %+v, want exit 1 saying no enabled admin would remain", args, r)
		}
	}
	if row := listRow(t, cliRun(t, env, nil, "user", "list").stdout, "ann"); row[1] != "admin" || row[2] != "no" {
		t.Errorf("ann after the refusals: %q", row)
	}
	addUser(t, env, "bob", "admin", bobPassword)
	if r := cliRun(t, env, nil, "user", "role", "ann", "support"); r.code != exitOK {
		t.Errorf("demote ann while bob is an admin: %+v", r)
	}
}
