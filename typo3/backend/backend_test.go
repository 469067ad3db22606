package backend_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"runsdesk/db/dbtest"
	"runsdesk/runtime"
	"runsdesk/typo3/backend"
	"runsdesk/typo3/backend/backendtest"
	"runsdesk/typo3/roles"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// now is the moment every test signs in at.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// site is a database with TYPO3 12's be_users and be_groups: db fills them, dsn opens
// further connections.
type site struct {
	dsn string
	db  *sql.DB
}

func newSite(t testing.TB) site {
	t.Helper()
	dsn := dbtest.NewDatabase(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	backendtest.Create(t, db)
	return site{dsn: dsn, db: db}
}

// spiedDB opens the site through spyConnector: what the returned *sql.DB sends and receives
// is in the log.
func (s site) spiedDB(t *testing.T) (*sql.DB, *spyLog) {
	t.Helper()
	cfg, err := mysql.ParseDSN(s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := &spyLog{}
	db := sql.OpenDB(spyConnector{inner: connector, log: log})
	t.Cleanup(func() { _ = db.Close() })
	return db, log
}

func mustParse(t testing.TB, spec string) roles.Mapping {
	t.Helper()
	m, err := roles.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// editors is the mapping most tests use: group "Editors" gives reviewer.
const editors = "reviewer=Editors"

func TestSignInHashesPHPWrites(t *testing.T) {
	s := newSite(t)
	editorsUID := backendtest.InsertGroup(t, s.db, roles.Group{Title: "Editors"})
	r := backend.New(s.db, mustParse(t, editors), runtime.RoleAdmin)
	const password = "Grüße, \"quoted\" \\ and longer than bcrypt's seventy-two bytes would keep whole!"
	for _, format := range []backendtest.Format{backendtest.Argon2i, backendtest.Argon2id, backendtest.Bcrypt} {
		t.Run(string(format), func(t *testing.T) {
			uid := backendtest.InsertUser(t, s.db, backendtest.User{
				Username: "ed-" + string(format), Password: backendtest.Hash(t, format, password),
				RealName: "Ed Itor", Email: "ed@example.org", UserGroups: "99," + strconv.FormatInt(editorsUID, 10),
			})
			got, err := r.SignIn(context.Background(), "ed-"+string(format), password, now)
			if err != nil {
				t.Fatalf("SignIn(right password) = %v", err)
			}
			want := backend.Account{UID: uid, Username: "ed-" + string(format), RealName: "Ed Itor", Email: "ed@example.org", Role: runtime.RoleReviewer}
			if got != want {
				t.Errorf("SignIn = %+v, want %+v", got, want)
			}
			if _, err := r.SignIn(context.Background(), "ed-"+string(format), password+"!", now); !errors.Is(err, backend.ErrBadCredentials) {
				t.Errorf("SignIn(wrong password) = %v, want ErrBadCredentials", err)
			}
		})
	}
}

// fastPassword is the password of accounts hashed with BcryptFast.
const fastPassword = "correct horse battery staple"

func TestSignInRefusals(t *testing.T) {
	s := newSite(t)
	editorsUID := backendtest.InsertGroup(t, s.db, roles.Group{Title: "Editors"})
	hash := backendtest.Hash(t, backendtest.BcryptFast, fastPassword)
	groups := strconv.FormatInt(editorsUID, 10)
	for _, u := range []backendtest.User{
		{Username: "user-ok", Password: hash, UserGroups: groups, StartTime: now.Unix() - 1, EndTime: now.Unix() + 1},
		{Username: "user-deleted", Password: hash, UserGroups: groups, Deleted: true},
		{Username: "user-disabled", Password: hash, UserGroups: groups, Disable: true},
		{Username: "user-early", Password: hash, UserGroups: groups, StartTime: now.Unix() + 1},
		{Username: "user-late", Password: hash, UserGroups: groups, EndTime: now.Unix()},
		{Username: "user-nobody", Password: hash, UserGroups: "999"},
		{Username: "user-md5", Password: "$1$saltsalt$2vLvX4ITEEQI5LEUvJYpL1", UserGroups: groups},
		{Username: "user-broken", Password: hash[:len(hash)-1], UserGroups: groups},
		{Username: "user-twice", Password: hash, UserGroups: groups},
		{Username: "user-TWICE", Password: hash, UserGroups: groups},
	} {
		backendtest.InsertUser(t, s.db, u)
	}
	r := backend.New(s.db, mustParse(t, editors), runtime.RoleAdmin)
	for _, c := range []struct {
		username, password string
		want               error
	}{
		{"user-ok", fastPassword, nil},
		{"user-OK", fastPassword, nil},
		{"user-ok", fastPassword + "x", backend.ErrBadCredentials},
		{"user-ok", "", backend.ErrBadCredentials},
		{"user-unknown", fastPassword, backend.ErrBadCredentials},
		{"user-deleted", fastPassword, backend.ErrBadCredentials},
		{"user-disabled", fastPassword, backend.ErrDisabled},
		{"user-disabled", "pw-wrong", backend.ErrBadCredentials},
		{"user-early", fastPassword, backend.ErrNotStarted},
		{"user-late", fastPassword, backend.ErrExpired},
		{"user-nobody", fastPassword, backend.ErrNoRole},
		{"user-md5", fastPassword, backend.ErrHash},
		{"user-broken", fastPassword, backend.ErrHash},
		{"user-twice", fastPassword, backend.ErrAmbiguous},
	} {
		got, err := r.SignIn(context.Background(), c.username, c.password, now)
		if c.want == nil {
			if err != nil || got.Username != "user-ok" || got.Role != runtime.RoleReviewer {
				t.Errorf("SignIn(%q) = %+v, %v; want account ok as reviewer", c.username, got, err)
			}
			continue
		}
		if !errors.Is(err, c.want) || got != (backend.Account{}) {
			t.Errorf("SignIn(%q) = %+v, %v; want no account and %v", c.username, got, err, c.want)
			continue
		}
		for _, secret := range []string{c.password, hash, hash[7:29]} {
			if secret != "" && strings.Contains(err.Error(), secret) {
				t.Errorf("SignIn(%q) error %q quotes the password or hash", c.username, err)
			}
		}
		if strings.Contains(err.Error(), c.username) {
			t.Errorf("SignIn(%q) error %q quotes the submitted username", c.username, err)
		}
	}
}

func TestRoles(t *testing.T) {
	s := newSite(t)
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 1, Title: "Editors", Subgroups: "2"})
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 2, Title: "Chief editors", Subgroups: "3"})
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 3, Title: "Site admins"})
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 4, Title: "Support", Hidden: true})
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 5, Title: "Old support", Deleted: true})
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 6, Title: "Helpdesk"})
	users := []backendtest.User{
		{UID: 10, Username: "deep", UserGroups: "1"},
		{UID: 11, Username: "hidden", UserGroups: "4"},
		{UID: 12, Username: "deleted-group", UserGroups: "5"},
		{UID: 13, Username: "by-uid", UserGroups: "6"},
		{UID: 14, Username: "admin", Admin: 1},
		{UID: 15, Username: "admin-bit-unset", Admin: 2},
		{UID: 16, Username: "admin-in-admin-group", Admin: 1, UserGroups: "3"},
	}
	for _, u := range users {
		backendtest.InsertUser(t, s.db, u)
	}
	mapping := mustParse(t, "admin=Site admins,reviewer=#2,support=Support|Old support|#6")
	for _, c := range []struct {
		adminsAs runtime.Role
		uid      int64
		want     runtime.Role
		admin    bool
	}{
		{runtime.RoleAdmin, 10, runtime.RoleAdmin, false},
		{runtime.RoleAdmin, 11, "", false},
		{runtime.RoleAdmin, 12, "", false},
		{runtime.RoleAdmin, 13, runtime.RoleSupport, false},
		{runtime.RoleAdmin, 14, runtime.RoleAdmin, true},
		{runtime.RoleReviewer, 14, runtime.RoleReviewer, true},
		{runtime.RoleAdmin, 15, "", false},
		{runtime.RoleReviewer, 16, runtime.RoleAdmin, true},
	} {
		got, err := backend.New(s.db, mapping, c.adminsAs).Account(context.Background(), c.uid, now)
		if c.want == "" {
			if !errors.Is(err, backend.ErrNoRole) {
				t.Errorf("admins as %s: Account(%d) = %+v, %v; want ErrNoRole", c.adminsAs, c.uid, got, err)
			}
			continue
		}
		if err != nil || got.Role != c.want || got.Admin != c.admin {
			t.Errorf("admins as %s: Account(%d) = %+v, %v; want role %s, admin %v", c.adminsAs, c.uid, got, err, c.want, c.admin)
		}
	}

	// Groups are read at every check: a group hidden after sign-in takes the role away.
	if _, err := s.db.Exec("UPDATE be_groups SET hidden = 1 WHERE uid = 6"); err != nil {
		t.Fatal(err)
	}
	if _, err := backend.New(s.db, mapping, runtime.RoleAdmin).Account(context.Background(), 13, now); !errors.Is(err, backend.ErrNoRole) {
		t.Errorf("Account(13) after its group was hidden = %v, want ErrNoRole", err)
	}
}

func TestAccount(t *testing.T) {
	s := newSite(t)
	editorsUID := backendtest.InsertGroup(t, s.db, roles.Group{Title: "Editors"})
	groups := strconv.FormatInt(editorsUID, 10)
	ok := backendtest.InsertUser(t, s.db, backendtest.User{Username: "ok", RealName: "O K", Email: "ok@example.org", UserGroups: groups})
	deleted := backendtest.InsertUser(t, s.db, backendtest.User{Username: "deleted", UserGroups: groups, Deleted: true})
	disabled := backendtest.InsertUser(t, s.db, backendtest.User{Username: "disabled", UserGroups: groups, Disable: true})
	early := backendtest.InsertUser(t, s.db, backendtest.User{Username: "early", UserGroups: groups, StartTime: now.Unix() + 60})
	late := backendtest.InsertUser(t, s.db, backendtest.User{Username: "late", UserGroups: groups, EndTime: now.Unix() - 60})
	r := backend.New(s.db, mustParse(t, editors), runtime.RoleAdmin)

	got, err := r.Account(context.Background(), ok, now)
	want := backend.Account{UID: ok, Username: "ok", RealName: "O K", Email: "ok@example.org", Role: runtime.RoleReviewer}
	if err != nil || got != want {
		t.Errorf("Account(ok) = %+v, %v; want %+v", got, err, want)
	}
	for _, c := range []struct {
		uid  int64
		want error
	}{
		{deleted, backend.ErrNotFound},
		{ok + 1000, backend.ErrNotFound},
		{disabled, backend.ErrDisabled},
		{early, backend.ErrNotStarted},
		{late, backend.ErrExpired},
	} {
		if got, err := r.Account(context.Background(), c.uid, now); !errors.Is(err, c.want) {
			t.Errorf("Account(%d) = %+v, %v; want %v", c.uid, got, err, c.want)
		}
	}
	if _, err := r.Account(context.Background(), early, now.Add(time.Minute)); err != nil {
		t.Errorf("Account(early) once its start time came = %v", err)
	}
}

func TestExists(t *testing.T) {
	s := newSite(t)
	backendtest.InsertUser(t, s.db, backendtest.User{Username: "ada"})
	backendtest.InsertUser(t, s.db, backendtest.User{Username: "off", Disable: true})
	backendtest.InsertUser(t, s.db, backendtest.User{Username: "gone", Deleted: true})
	r := backend.New(s.db, roles.Mapping{}, runtime.RoleAdmin)
	for name, want := range map[string]bool{"ada": true, "ADA": true, "off": true, "gone": false, "bob": false, "": false} {
		if got, err := r.Exists(context.Background(), name); err != nil || got != want {
			t.Errorf("Exists(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
}

// mfaSecret is a TOTP secret as TYPO3 stores it; it must never reach runsdesk.
const mfaSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

// mfaColumns are be_users.mfa values and whether each means TYPO3's MFA is on.
var mfaColumns = []struct {
	mfa []byte
	on  bool
}{
	{nil, false},
	{[]byte(""), false},
	{[]byte("[]"), false},
	{[]byte("{}"), false},
	{[]byte(`{"totp":{"secret":"` + mfaSecret + `","active":true,"name":"phone","created":1700000000,"updated":1700000000,"attempts":0,"lastUsed":0}}`), true},
	{[]byte(`{"totp":{"secret":"` + mfaSecret + `","active":false,"attempts":0},"recovery-codes":{"active":false,"codes":["$argon2i$x"]}}`), false},
	{[]byte(`{"totp":{"secret":"` + mfaSecret + `","active":false},"recovery-codes":{"active":true,"codes":[]}}`), true},
	{[]byte(`{"totp":{"secret":"` + mfaSecret + `"}}`), false},
	{[]byte(`{"totp":{"secret":"` + mfaSecret + `","active":false}}`), false},
	{[]byte(`{"totp": {"secret": "` + mfaSecret + `", "active" : false } , "x" : { "active" : "" } }`), false},
	{[]byte(`{"totp":{"active":0},"webauthn":{"active":null},"x":{"active":""},"y":{"active":"0"},"z":{"active":[]}}`), false},
	{[]byte(`{"totp":{"active":1}}`), true},
	{[]byte(`{"totp":{"active":"yes"}}`), true},
	{[]byte(`{"totp":{"active":{"nested":true}}}`), true},
	{[]byte(`{"totp":{"secret":"` + mfaSecret + `","active":true`), true},
	{[]byte("not json at all"), true},
	{[]byte{0xff, 0xfe, 0x00, 0x01}, true},
	{[]byte(`"a string"`), true},
	{[]byte(`[{"active":false}]`), true},
}

func TestMFA(t *testing.T) {
	s := newSite(t)
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 1, Title: "Editors"})
	r := backend.New(s.db, mustParse(t, editors), runtime.RoleAdmin)
	for i, c := range mfaColumns {
		uid := backendtest.InsertUser(t, s.db, backendtest.User{Username: "u" + strconv.Itoa(i), UserGroups: "1", MFA: c.mfa})
		got, err := r.Account(context.Background(), uid, now)
		if err != nil || got.MFA != c.on {
			t.Errorf("mfa %q: Account = %+v, %v; want MFA %v", c.mfa, got, err, c.on)
		}
	}
}

// TestReaderNeverWritesNorReadsMFASecrets signs in, re-checks and looks up accounts through a
// connection that records every statement and every value received: all statements are
// SELECTs, no value holds the mfa column or a part of it, and both tables (definitions and
// every row) are unchanged afterwards.
func TestReaderNeverWritesNorReadsMFASecrets(t *testing.T) {
	s := newSite(t)
	backendtest.InsertGroup(t, s.db, roles.Group{UID: 1, Title: "Editors"})
	hash := backendtest.Hash(t, backendtest.BcryptFast, fastPassword)
	var uids []int64
	for i, c := range mfaColumns {
		uids = append(uids, backendtest.InsertUser(t, s.db, backendtest.User{
			Username: "u" + strconv.Itoa(i), Password: hash, UserGroups: "1", MFA: c.mfa,
		}))
	}
	backendtest.InsertUser(t, s.db, backendtest.User{Username: "disabled", Password: hash, UserGroups: "1", Disable: true})
	backendtest.InsertUser(t, s.db, backendtest.User{Username: "deleted", Password: hash, UserGroups: "1", Deleted: true})
	before := backendtest.Snapshot(t, s.db)

	spied, log := s.spiedDB(t)
	r := backend.New(spied, mustParse(t, editors), runtime.RoleAdmin)
	ctx := context.Background()
	for i, uid := range uids {
		if _, err := r.Account(ctx, uid, now); err != nil {
			t.Fatalf("Account(u%d) = %v", i, err)
		}
	}
	for _, i := range []int{0, 4, len(uids) - 1} {
		if _, err := r.SignIn(ctx, "u"+strconv.Itoa(i), fastPassword, now); err != nil {
			t.Fatalf("SignIn(u%d) = %v", i, err)
		}
	}
	_, _ = r.SignIn(ctx, "u4", "wrong", now)
	for _, name := range []string{"disabled", "deleted", "unknown"} {
		_, _ = r.SignIn(ctx, name, fastPassword, now)
		_, _ = r.Exists(ctx, name)
	}

	statements, values := log.snapshot()
	if len(statements) == 0 || len(values) == 0 {
		t.Fatal("the spy saw nothing")
	}
	for _, stmt := range statements {
		if !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(stmt)), "SELECT ") {
			t.Errorf("statement is not a SELECT: %q", stmt)
		}
	}
	for _, v := range values {
		for _, c := range mfaColumns {
			if len(c.mfa) > 2 && strings.Contains(v, string(c.mfa)) {
				t.Errorf("a value read holds an mfa column: %q", v)
			}
		}
		if strings.Contains(v, mfaSecret) || strings.Contains(v, "recovery-codes") {
			t.Errorf("a value read holds MFA data: %q", v)
		}
	}
	if after := backendtest.Snapshot(t, s.db); after != before {
		t.Errorf("be_users or be_groups changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestCreateIsTYPO3Schema checks the columns runsdesk relies on have TYPO3 12's types.
func TestCreateIsTYPO3Schema(t *testing.T) {
	s := newSite(t)
	want := map[string]string{
		"be_users.uid":        "int(10) unsigned",
		"be_users.username":   "varchar(50)",
		"be_users.password":   "varchar(255)",
		"be_users.admin":      "smallint(5) unsigned",
		"be_users.usergroup":  "text",
		"be_users.disable":    "smallint(5) unsigned",
		"be_users.deleted":    "smallint(5) unsigned",
		"be_users.starttime":  "int(10) unsigned",
		"be_users.endtime":    "int(10) unsigned",
		"be_users.mfa":        "mediumblob",
		"be_users.realName":   "varchar(80)",
		"be_users.email":      "varchar(255)",
		"be_users.lastlogin":  "int(11)",
		"be_groups.uid":       "int(10) unsigned",
		"be_groups.title":     "varchar(50)",
		"be_groups.subgroup":  "text",
		"be_groups.hidden":    "smallint(5) unsigned",
		"be_groups.deleted":   "smallint(5) unsigned",
		"be_users.collation":  "utf8mb4_unicode_ci",
		"be_groups.collation": "utf8mb4_unicode_ci",
	}
	rows, err := s.db.Query(`SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME), COLUMN_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE()
		UNION ALL SELECT CONCAT(TABLE_NAME, '.collation'), TABLE_COLLATION FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		got[name] = typ
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("%s is %q, want %q", name, got[name], typ)
		}
	}
	if n := len(got); n != 25+31+2 {
		t.Errorf("%d columns and tables, want be_groups' 25, be_users' 31 and 2 collations", n)
	}
}
