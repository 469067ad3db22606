package db

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
)

// cliAudit is the audit record the tests attach to an account change.
func cliAudit(action, reason string) *runtime.AuditRecord {
	return &runtime.AuditRecord{Actor: runtime.Actor{Name: "cli:runsdesk:test", Role: runtime.RoleService},
		AuditNote: runtime.AuditNote{Action: action, Outcome: "success", Reason: reason}}
}

// auditRows returns "actor action outcome reason" of every audit row, oldest first.
func auditRows(t *testing.T, a *Audit) []string {
	t.Helper()
	rows, err := a.RecentAudit(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range slices.Backward(rows) {
		out = append(out, r.ActorName+" "+r.Action+" "+r.Outcome+" "+r.Reason)
	}
	return out
}

func TestResetPasswordRequiresAChangeAtNextSignIn(t *testing.T) {
	a, pool := newAccounts(t)
	ctx := context.Background()
	uid := mustCreateUser(t, a, "dora", runtime.RoleAdmin)
	const reset = "a reset passphrase from the cli"
	const chosen = "the passphrase dora chose herself"

	if err := a.ResetPassword(ctx, uid, reset, cliAudit("user_reset_password", "user dora")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Authenticate(ctx, "dora", strongPassword); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("old password after the reset: got %v, want ErrBadCredentials", err)
	}
	actor, _, err := a.Authenticate(ctx, "dora", reset)
	if err != nil || !actor.PasswordChangeRequired {
		t.Fatalf("sign-in with the reset password: %+v, %v; want an actor who must change it", actor, err)
	}
	if s, _, err := a.SessionActor(ctx, uid); err != nil || !s.PasswordChangeRequired {
		t.Errorf("SessionActor after the reset: %+v, %v; want PasswordChangeRequired", s, err)
	}
	var pe *PolicyError
	if _, err := a.ChangePassword(ctx, uid, reset, reset); !errors.As(err, &pe) {
		t.Errorf("keeping the reset password: got %v, want a *PolicyError", err)
	}
	if _, err := a.ChangePassword(ctx, uid, reset, chosen); err != nil {
		t.Fatal(err)
	}
	actor, _, err = a.Authenticate(ctx, "dora", chosen)
	if err != nil || actor.PasswordChangeRequired {
		t.Errorf("after the person's own change: %+v, %v; want no change required", actor, err)
	}
	if got := auditRows(t, NewAudit(pool, nil)); !slices.Equal(got, []string{"cli:runsdesk:test user_reset_password success user dora"}) {
		t.Errorf("audit = %q", got)
	}
}

func TestAccountLookupsAndEnable(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	pool := accountsPool(t)
	a, err := NewAccounts(pool, func() time.Time { return now }, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	zed := mustCreateUser(t, a, "zed", runtime.RoleSupport)
	amy := mustCreateUser(t, a, "amy", runtime.RoleReviewer)
	if _, err := pool.Exec(`INSERT INTO be_users (username, deleted) VALUES ('gone', 1)`); err != nil {
		t.Fatal(err)
	}

	u, err := a.AccountByUsername(ctx, "amy")
	if err != nil || u.UID != amy || u.Role != runtime.RoleReviewer || u.Created != now.Unix() || u.Disabled || u.LastLogin != 0 {
		t.Errorf("AccountByUsername(amy) = %+v, %v", u, err)
	}
	for _, name := range []string{"nobody", "gone", ""} {
		if _, err := a.AccountByUsername(ctx, name); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("AccountByUsername(%q): got %v, want runtime.ErrNotFound", name, err)
		}
	}

	if err := a.DisableUser(ctx, zed, cliAudit("user_disable", "user zed")); err != nil {
		t.Fatal(err)
	}
	users, err := a.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range users {
		got = append(got, u.Username)
	}
	if !slices.Equal(got, []string{"amy", "zed"}) || !users[1].Disabled || users[0].Disabled {
		t.Errorf("ListUsers = %+v, want amy then zed (disabled), not the deleted user", users)
	}

	if err := a.EnableUser(ctx, zed, cliAudit("user_enable", "user zed")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Authenticate(ctx, "zed", strongPassword); err != nil {
		t.Errorf("enabled user signs in: %v", err)
	}
	if err := a.EnableUser(ctx, zed, cliAudit("user_enable", "user zed")); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("enabling an enabled user: got %v, want runtime.ErrNotFound (nothing to change)", err)
	}
	if err := a.EndSessions(ctx, 999999, cliAudit("user_end_sessions", "nobody")); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("EndSessions(unknown): got %v, want runtime.ErrNotFound", err)
	}
	want := []string{"cli:runsdesk:test user_disable success user zed", "cli:runsdesk:test user_enable success user zed"}
	if got := auditRows(t, NewAudit(pool, nil)); !slices.Equal(got, want) {
		t.Errorf("audit = %q, want %q (no row for changes that did not happen)", got, want)
	}
}

// TestAccountChangeAndItsAuditRowAreOneTransaction: when the audit row cannot be written, the
// change is rolled back.
func TestAccountChangeAndItsAuditRowAreOneTransaction(t *testing.T) {
	a, pool := newAccounts(t)
	ctx := context.Background()
	uid := mustCreateUser(t, a, "erin", runtime.RoleReviewer)
	tokens := NewServiceAccounts(pool, nil)
	token, err := tokens.CreateToken(ctx, "ci", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(`RENAME TABLE tx_runsdesk_audit TO audit_away`); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func() error{
		"disable":      func() error { return a.DisableUser(ctx, uid, cliAudit("user_disable", "erin")) },
		"set role":     func() error { return a.SetRole(ctx, uid, runtime.RoleAdmin, cliAudit("user_role", "erin")) },
		"end sessions": func() error { return a.EndSessions(ctx, uid, cliAudit("user_end_sessions", "erin")) },
		"reset password": func() error {
			return a.ResetPassword(ctx, uid, "another long passphrase", cliAudit("user_reset_password", "erin"))
		},
		"revoke token": func() error { return tokens.DisableToken(ctx, "ci", cliAudit("token_revoke", "ci")) },
		"rotate token": func() error {
			_, err := tokens.RotateToken(ctx, "ci", cliAudit("token_rotate", "ci"))
			return err
		},
	} {
		if err := change(); err == nil || errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("%s without an audit table: got %v, want a store error", name, err)
		}
	}
	actor, epoch, err := a.Authenticate(ctx, "erin", strongPassword)
	if err != nil || actor.Role != runtime.RoleReviewer || epoch != 0 || actor.PasswordChangeRequired {
		t.Errorf("erin after the failed changes: %+v epoch %d, %v; want her unchanged", actor, epoch, err)
	}
	if _, err := tokens.ActorForToken(ctx, token); err != nil {
		t.Errorf("the token after the failed revoke and rotation: %v, want it still working", err)
	}
}

func TestListRevokeAndRotateTokens(t *testing.T) {
	pool := accountsPool(t)
	now := time.Unix(1_800_000_000, 0)
	s := NewServiceAccounts(pool, func() time.Time { return now })
	ctx := context.Background()
	old, err := s.CreateToken(ctx, "ci", []string{runtime.ScopeRun, runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateToken(ctx, "batch", []string{runtime.ScopeCancel}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if _, err := s.ActorForToken(ctx, old); err != nil {
		t.Fatal(err)
	}

	list, err := s.ListTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []ServiceAccount{
		{Name: "batch", Scopes: []string{"cancel"}, Created: 1_800_000_000},
		{Name: "ci", Scopes: []string{"run", "read"}, Created: 1_800_000_000, LastUsed: 1_800_003_600},
	}
	if !slices.EqualFunc(list, want, func(a, b ServiceAccount) bool {
		return a.Name == b.Name && slices.Equal(a.Scopes, b.Scopes) && a.Created == b.Created && a.LastUsed == b.LastUsed && a.Disabled == b.Disabled
	}) {
		t.Errorf("ListTokens = %+v, want %+v", list, want)
	}

	if sa, err := s.ServiceAccountByName(ctx, "ci"); err != nil || sa.Name != "ci" || sa.LastUsed != 1_800_003_600 {
		t.Errorf("ServiceAccountByName(ci) = %+v, %v", sa, err)
	}
	if _, err := s.ServiceAccountByName(ctx, "nobody"); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("ServiceAccountByName(nobody): got %v, want runtime.ErrNotFound", err)
	}
	fresh, err := s.RotateToken(ctx, "ci", cliAudit("token_rotate", "ci"))
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old || len(fresh) != len(old) {
		t.Errorf("rotated token %q: want a new token like %q", fresh, old)
	}
	if _, err := s.ActorForToken(ctx, old); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("old token after the rotation: got %v, want runtime.ErrNotFound", err)
	}
	if a, err := s.ActorForToken(ctx, fresh); err != nil || a.Name != "ci" || !slices.Equal(a.Scopes, []string{"run", "read"}) {
		t.Errorf("new token: %+v, %v; want ci with its scopes", a, err)
	}

	if err := s.DisableToken(ctx, "ci", cliAudit("token_revoke", "ci")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ActorForToken(ctx, fresh); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("revoked token: got %v, want runtime.ErrNotFound", err)
	}
	if err := s.DisableToken(ctx, "ci", cliAudit("token_revoke", "ci")); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("revoking twice: got %v, want runtime.ErrNotFound (nothing to change)", err)
	}
	again, err := s.RotateToken(ctx, "ci", cliAudit("token_rotate", "ci"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ActorForToken(ctx, again); err != nil {
		t.Errorf("a revoked account rotated: %v, want its new token to work", err)
	}
	if _, err := s.RotateToken(ctx, "nobody", cliAudit("token_rotate", "nobody")); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("RotateToken(unknown): got %v, want runtime.ErrNotFound", err)
	}
	want2 := []string{"cli:runsdesk:test token_rotate success ci", "cli:runsdesk:test token_revoke success ci", "cli:runsdesk:test token_rotate success ci"}
	if got := auditRows(t, NewAudit(pool, nil)); !slices.Equal(got, want2) {
		t.Errorf("audit = %q, want %q", got, want2)
	}
}

// TestConcurrentRevokesAndEnablesHaveOneWinner: many callers revoking one token, or enabling
// one user, at once: exactly one changes it and writes the audit row; the others are told
// there was nothing to change.
func TestConcurrentRevokesAndEnablesHaveOneWinner(t *testing.T) {
	a, pool := newAccounts(t)
	ctx := context.Background()
	uid := mustCreateUser(t, a, "finn", runtime.RoleSupport)
	if err := a.DisableUser(ctx, uid, nil); err != nil {
		t.Fatal(err)
	}
	tokens := NewServiceAccounts(pool, nil)
	if _, err := tokens.CreateToken(ctx, "ci", []string{runtime.ScopeRead}); err != nil {
		t.Fatal(err)
	}
	const callers = 16
	for name, change := range map[string]func() error{
		"revoke": func() error { return tokens.DisableToken(ctx, "ci", cliAudit("token_revoke", "ci")) },
		"enable": func() error { return a.EnableUser(ctx, uid, cliAudit("user_enable", "finn")) },
	} {
		errs := make(chan error, callers)
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- change()
			}()
		}
		wg.Wait()
		close(errs)
		won := 0
		for err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, runtime.ErrNotFound):
				t.Errorf("%s: %v, want nil or runtime.ErrNotFound", name, err)
			}
		}
		if won != 1 {
			t.Errorf("%s: %d callers changed it, want exactly 1", name, won)
		}
	}
	got := auditRows(t, NewAudit(pool, nil))
	slices.Sort(got)
	if want := []string{"cli:runsdesk:test token_revoke success ci", "cli:runsdesk:test user_enable success finn"}; !slices.Equal(got, want) {
		t.Errorf("audit = %q, want one row per change %q", got, want)
	}
}
