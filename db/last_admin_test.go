package db

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/admin"
)

// TestNoChangeLeavesNoEnabledAdmin: disabling or demoting the only enabled admin is
// admin.ErrLastAdmin and changes nothing (nor writes its audit row); with another enabled
// admin it is allowed; promoting and changes of other people are never refused.
func TestNoChangeLeavesNoEnabledAdmin(t *testing.T) {
	a, _ := newAccounts(t)
	ctx := context.Background()
	ann := mustCreateUser(t, a, "ann", runtime.RoleAdmin)
	bob := mustCreateUser(t, a, "bob", runtime.RoleSupport)

	if err := a.DisableUser(ctx, ann, cliAudit("user_disable", "ann")); !errors.Is(err, admin.ErrLastAdmin) {
		t.Errorf("disable the only admin: %v, want ErrLastAdmin", err)
	}
	if err := a.SetRole(ctx, ann, runtime.RoleReviewer, nil); !errors.Is(err, admin.ErrLastAdmin) {
		t.Errorf("demote the only admin: %v, want ErrLastAdmin", err)
	}
	if err := a.SetRole(ctx, ann, runtime.RoleAdmin, nil); err != nil {
		t.Errorf("keep the only admin an admin: %v", err)
	}
	if u, _ := a.UserByUID(ctx, ann); u.Disabled || u.Role != runtime.RoleAdmin {
		t.Errorf("ann after the refusals: %+v", u)
	}
	if err := a.DisableUser(ctx, bob, nil); err != nil {
		t.Errorf("disable bob: %v", err)
	}
	if err := a.SetRole(ctx, bob, runtime.RoleAdmin, nil); err != nil {
		t.Errorf("promote disabled bob: %v", err)
	}
	if err := a.DisableUser(ctx, ann, nil); !errors.Is(err, admin.ErrLastAdmin) {
		t.Errorf("disable ann while the other admin is disabled: %v, want ErrLastAdmin", err)
	}
	if err := a.EnableUser(ctx, bob, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.DisableUser(ctx, ann, nil); err != nil {
		t.Errorf("disable ann while bob is an enabled admin: %v", err)
	}
	if err := a.SetRole(ctx, bob, runtime.RoleSupport, nil); !errors.Is(err, admin.ErrLastAdmin) {
		t.Errorf("demote bob, now the only enabled admin: %v, want ErrLastAdmin", err)
	}
}

// TestLastAdminRace: many admins disabled or demoted at once, each by its own goroutine;
// exactly one change is refused and exactly one enabled admin remains.
func TestLastAdminRace(t *testing.T) {
	a, pool := newAccounts(t)
	ctx := context.Background()
	const n = 12
	uids := make([]int64, n)
	for i := range uids {
		uids[i] = mustCreateUser(t, a, fmt.Sprintf("admin%02d", i), runtime.RoleAdmin)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, uid := range uids {
		wg.Go(func() {
			if i%2 == 0 {
				errs[i] = a.DisableUser(ctx, uid, cliAudit("user_disable", "race"))
				return
			}
			errs[i] = a.SetRole(ctx, uid, runtime.RoleSupport, cliAudit("user_role", "race"))
		})
	}
	wg.Wait()
	refused := 0
	for i, err := range errs {
		switch {
		case errors.Is(err, admin.ErrLastAdmin):
			refused++
		case err != nil:
			t.Errorf("change %d: %v", i, err)
		}
	}
	var enabled, audited int
	if err := pool.QueryRow(`SELECT COUNT(*) FROM be_users WHERE role = 'admin' AND disable = 0 AND deleted = 0`).Scan(&enabled); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_audit WHERE reason = 'race'`).Scan(&audited); err != nil {
		t.Fatal(err)
	}
	if refused != 1 || enabled != 1 || audited != n-1 {
		t.Errorf("%d refused, %d enabled admins left, %d changes audited; want 1, 1 and %d", refused, enabled, audited, n-1)
	}
}
