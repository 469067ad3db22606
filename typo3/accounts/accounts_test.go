package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/typo3/backend"
	"runsdesk/typo3/backend/backendtest"
	"runsdesk/typo3/roles"
	"runsdesk/typo3/typo3test"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const password = "a TYPO3 password of some length"

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// desk is runsdesk beside a TYPO3 site: the site's pool, runsdesk's own accounts and the
// Accounts under test.
type desk struct {
	site     *sql.DB
	pool     *sql.DB
	own      *db.Accounts
	accounts *Accounts
	clock    *clock
	editors  int64
	admins   int64
}

func newDesk(t *testing.T) *desk {
	t.Helper()
	beside := typo3test.New(t)
	site, pool := beside.Site, beside.Pool
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	own, err := db.NewAccounts(pool, c.now, 2, db.CheapHashes())
	if err != nil {
		t.Fatal(err)
	}
	d := &desk{site: site, pool: pool, own: own, clock: c,
		editors: backendtest.InsertGroup(t, site, roles.Group{Title: "Editors"}),
		admins:  backendtest.InsertGroup(t, site, roles.Group{Title: "Desk admins"})}
	mapping, err := roles.Parse("reviewer=Editors,admin=Desk admins")
	if err != nil {
		t.Fatal(err)
	}
	d.accounts = New(own, db.NewIdentities(pool, c.now), backend.New(site, mapping, runtime.RoleAdmin), c.now,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	return d
}

func (d *desk) user(t *testing.T, u backendtest.User) int64 {
	t.Helper()
	if u.Password == "" {
		u.Password = backendtest.Hash(t, backendtest.BcryptFast, password)
	}
	return backendtest.InsertUser(t, d.site, u)
}

// TestTYPO3AccountSignsIn: a TYPO3 editor signs in with their TYPO3 password as a runsdesk
// person of the role their group gives, the same person each time; TYPO3's tables are as
// they were.
func TestTYPO3AccountSignsIn(t *testing.T) {
	d := newDesk(t)
	d.user(t, backendtest.User{Username: "Erika", UserGroups: fmt.Sprint(d.editors), RealName: "Erika E.", Email: "erika@example.com"})
	before := backendtest.Snapshot(t, d.site)
	ctx := context.Background()
	first, epoch, err := d.accounts.Authenticate(ctx, "erika", password)
	if err != nil {
		t.Fatal(err)
	}
	if first.Role != runtime.RoleReviewer || first.Name != "erika" || first.DisplayName != "Erika E." || first.MFARequired {
		t.Errorf("actor %+v, want reviewer erika (Erika E.) owing no second factor", first)
	}
	again, _, err := d.accounts.Authenticate(ctx, "ERIKA", password)
	if err != nil || again.UserUID != first.UserUID {
		t.Errorf("second sign-in: %+v, %v; want the same person %d", again, err, first.UserUID)
	}
	if actor, e, err := d.accounts.SessionActor(ctx, first.UserUID); err != nil || actor.UserUID != first.UserUID || e != epoch {
		t.Errorf("SessionActor: %+v %d %v", actor, e, err)
	}
	if _, err := d.accounts.ChangePassword(ctx, first.UserUID, password, "a brand new password for runsdesk"); err == nil {
		t.Error("a TYPO3 account's person changed a runsdesk password")
	}
	if after := backendtest.Snapshot(t, d.site); after != before {
		t.Errorf("sign-ins changed TYPO3's tables:\nbefore %s\nafter %s", before, after)
	}
}

// TestTYPO3Refusals: every refusal of the TYPO3 account is a bad-credentials error (one
// message for the person), and makes no runsdesk person.
func TestTYPO3Refusals(t *testing.T) {
	d := newDesk(t)
	past := d.clock.now().Add(-time.Hour).Unix()
	future := d.clock.now().Add(time.Hour).Unix()
	groups := fmt.Sprint(d.editors)
	d.user(t, backendtest.User{Username: "erika", UserGroups: groups})
	d.user(t, backendtest.User{Username: "dora", UserGroups: groups, Disable: true})
	d.user(t, backendtest.User{Username: "exi", UserGroups: groups, EndTime: past})
	d.user(t, backendtest.User{Username: "nova", UserGroups: groups, StartTime: future})
	d.user(t, backendtest.User{Username: "ulla"})
	d.user(t, backendtest.User{Username: "gone", UserGroups: groups, Deleted: true})
	for _, c := range []struct{ username, password string }{
		{"erika", "wrong password, long enough"}, {"dora", password}, {"exi", password}, {"nova", password},
		{"ulla", password}, {"gone", password}, {"nobody", password}, {"erika", ""},
	} {
		_, _, err := d.accounts.Authenticate(context.Background(), c.username, c.password)
		if !errors.Is(err, db.ErrBadCredentials) || !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("%s: %v, want bad credentials", c.username, err)
		}
	}
	var people int
	if err := d.site.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_person`).Scan(&people); err != nil || people != 0 {
		t.Errorf("refused sign-ins made %d people (%v)", people, err)
	}
}

// TestOwnAccountFirst: a username of runsdesk's own account signs in as that account, with
// its own password; a TYPO3 account of the same name cannot take it over.
func TestOwnAccountFirst(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	uid, err := d.own.CreateUser(ctx, "olga", "olga's own password, quite long", runtime.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	d.user(t, backendtest.User{Username: "olga", UserGroups: fmt.Sprint(d.editors)})
	actor, _, err := d.accounts.Authenticate(ctx, "olga", "olga's own password, quite long")
	if err != nil || actor.UserUID != uid || actor.Role != runtime.RoleAdmin {
		t.Errorf("olga with runsdesk's password: %+v, %v; want runsdesk's own admin %d", actor, err, uid)
	}
	if _, _, err := d.accounts.Authenticate(ctx, "olga", password); !errors.Is(err, db.ErrBadCredentials) {
		t.Errorf("olga with the TYPO3 password: %v, want bad credentials", err)
	}
}

// TestTYPO3MFAOwesOurs: a TYPO3 account with TYPO3's own MFA signs in owing
// runsdesk's second factor.
func TestTYPO3MFAOwesOurs(t *testing.T) {
	d := newDesk(t)
	d.user(t, backendtest.User{Username: "mia", UserGroups: fmt.Sprint(d.editors), MFA: []byte(`{"totp":{"active":true,"secret":"JBSWY3DPEHPK3PXP"}}`)})
	actor, _, err := d.accounts.Authenticate(context.Background(), "mia", password)
	if err != nil || !actor.MFARequired {
		t.Errorf("mia: %+v, %v; want signed in owing runsdesk's second factor", actor, err)
	}
}

// TestSessionFollowsTYPO3: a session of a TYPO3 account ends once, at most RecheckInterval
// after, TYPO3 disables the account or its groups give another role (synced: the next sign-in
// has it).
func TestSessionFollowsTYPO3(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	erika := d.user(t, backendtest.User{Username: "erika", UserGroups: fmt.Sprint(d.editors)})
	dora := d.user(t, backendtest.User{Username: "dora", UserGroups: fmt.Sprint(d.editors)})
	e, _, err := d.accounts.Authenticate(ctx, "erika", password)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := d.accounts.Authenticate(ctx, "dora", password)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.site.Exec(`UPDATE be_users SET usergroup = ? WHERE uid = ?`, fmt.Sprint(d.admins), erika); err != nil {
		t.Fatal(err)
	}
	if _, err := d.site.Exec(`UPDATE be_users SET disable = 1 WHERE uid = ?`, dora); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []int64{e.UserUID, o.UserUID} {
		if _, _, err := d.accounts.SessionActor(ctx, uid); err != nil {
			t.Errorf("person %d within RecheckInterval of the sign-in: %v, want the session kept", uid, err)
		}
	}
	d.clock.add(RecheckInterval + time.Second)
	for _, uid := range []int64{e.UserUID, o.UserUID} {
		if _, _, err := d.accounts.SessionActor(ctx, uid); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("person %d after TYPO3 changed their account: %v, want the session ended", uid, err)
		}
	}
	again, _, err := d.accounts.Authenticate(ctx, "erika", password)
	if err != nil || again.Role != runtime.RoleAdmin || again.UserUID != e.UserUID {
		t.Errorf("erika's next sign-in: %+v, %v; want admin, the same person", again, err)
	}
	if _, _, err := d.accounts.SessionActor(ctx, again.UserUID); err != nil {
		t.Errorf("erika after signing in again: %v", err)
	}
}

// TestAdminDeskLeavesTYPO3AccountsToTYPO3: the admin desk (the people page and the CLI) refuses
// to disable, enable, re-role, reset or re-address a person who signs in with a TYPO3 account,
// and still ends their runsdesk sessions.
func TestAdminDeskLeavesTYPO3AccountsToTYPO3(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	d.user(t, backendtest.User{Username: "erika", UserGroups: fmt.Sprint(d.editors)})
	if _, _, err := d.accounts.Authenticate(ctx, "erika", password); err != nil {
		t.Fatal(err)
	}
	store, err := db.NewAdmin(d.pool, nil, d.clock.now, db.CheapHashes())
	if err != nil {
		t.Fatal(err)
	}
	desk := admin.New(store, d.clock.now)
	by := admin.By{Actor: runtime.Actor{Name: "ada", Role: runtime.RoleAdmin, UserUID: 1}}
	for what, err := range map[string]error{
		"disable":        func() error { _, err := desk.Disable(ctx, by, "erika"); return err }(),
		"role":           func() error { _, _, err := desk.SetRole(ctx, by, "erika", "admin"); return err }(),
		"reset-password": func() error { _, _, err := desk.ResetPassword(ctx, by, "erika", ""); return err }(),
		"email":          func() error { _, _, err := desk.SetEmail(ctx, by, "erika", "e@example.com"); return err }(),
	} {
		if !errors.Is(err, admin.ErrManagedInTYPO3) {
			t.Errorf("%s of a TYPO3 account: %v, want %v", what, err, admin.ErrManagedInTYPO3)
		}
	}
	if _, err := desk.EndSessions(ctx, by, "erika"); err != nil {
		t.Errorf("end-sessions of a TYPO3 account: %v", err)
	}
}

// TestConcurrentFirstSignIns: eight first sign-ins of one TYPO3 account at once all succeed,
// as one runsdesk person.
func TestConcurrentFirstSignIns(t *testing.T) {
	d := newDesk(t)
	d.user(t, backendtest.User{Username: "erika", UserGroups: fmt.Sprint(d.editors)})
	uids := make([]int64, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range uids {
		wg.Go(func() {
			actor, _, err := d.accounts.Authenticate(context.Background(), "erika", password)
			uids[i], errs[i] = actor.UserUID, err
		})
	}
	wg.Wait()
	for i := range uids {
		if errs[i] != nil || uids[i] != uids[0] || uids[0] == 0 {
			t.Errorf("sign-in %d: person %d, %v; want all the same person", i, uids[i], errs[i])
		}
	}
	var people int
	if err := d.site.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_person`).Scan(&people); err != nil || people != 1 {
		t.Errorf("%d people (%v), want 1", people, err)
	}
}
