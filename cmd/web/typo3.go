package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"runsdesk/app"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/typo3/backend"
	"runsdesk/typo3/roles"
)

// besideTYPO3 is serve's configuration of the TYPO3 site it runs beside (--typo3-roles,
// --typo3-admins-as, --typo3-backend-url); --typo3 itself is a database flag.
type besideTYPO3 struct {
	Roles      string
	AdminsAs   string
	BackendURL string
}

func (b *binder) besideTYPO3(t *besideTYPO3) {
	b.String(&t.Roles, "typo3-roles")
	b.String(&t.AdminsAs, "typo3-admins-as")
	b.String(&t.BackendURL, "typo3-backend-url")
}

// config returns the application's TYPO3 configuration of the flags (without its site pool,
// which the database gives); on is --typo3. The TYPO3 flags without --typo3 are an error, as
// are a bad mapping, --typo3-admins-as other than admin or reviewer, and a backend URL that
// is not an absolute http(s) URL.
func (t besideTYPO3) config(on bool) (app.TYPO3Config, error) {
	if !on {
		if t.Roles != "" || t.BackendURL != "" || t.AdminsAs != "admin" {
			return app.TYPO3Config{}, errors.New("--typo3-roles, --typo3-admins-as and --typo3-backend-url need --typo3 (RUNSDESK_TYPO3=1)")
		}
		return app.TYPO3Config{}, nil
	}
	mapping, err := roles.Parse(t.Roles)
	if err != nil {
		return app.TYPO3Config{}, fmt.Errorf("--typo3-roles: %w", err)
	}
	adminsAs, err := roles.ParseAdminsAs(t.AdminsAs)
	if err != nil {
		return app.TYPO3Config{}, fmt.Errorf("--typo3-admins-as: %w", err)
	}
	if t.BackendURL != "" {
		u, err := url.Parse(t.BackendURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return app.TYPO3Config{}, fmt.Errorf("--typo3-backend-url: %q is not an absolute http or https URL", t.BackendURL)
		}
	}
	return app.TYPO3Config{Roles: mapping, AdminsAs: adminsAs, BackendURL: t.BackendURL}, nil
}

// refuseTYPO3Account refuses, beside TYPO3, an account command on a name only TYPO3 has: a
// live be_users row and no runsdesk person of that name. (runsdesk's people who sign in with a
// TYPO3 account are refused by the admin desk itself: admin.ErrManagedInTYPO3.)
func refuseTYPO3Account(ctx context.Context, conn *conn, username string) error {
	if conn.site == nil {
		return nil
	}
	if _, err := db.NewIdentities(conn.pool, nil).IssuerOf(ctx, username); !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	exists, err := backend.New(conn.site, roles.Mapping{}, runtime.RoleAdmin).Exists(ctx, username)
	if err != nil || !exists {
		return err
	}
	return fmt.Errorf("%q is a TYPO3 backend account: %w", username, admin.ErrManagedInTYPO3)
}
