package db

import (
	"context"
	"errors"
	"testing"

	"runsdesk/runtime"
)

func TestIdentitiesKeyedByIssuerAndSubject(t *testing.T) {
	ctx := context.Background()
	pool := accountsPool(t)
	accounts, err := NewAccounts(pool, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	local, err := accounts.CreateUser(ctx, "ada", "a long test passphrase for runsdesk", runtime.RoleSupport)
	if err != nil {
		t.Fatal(err)
	}
	ids := NewIdentities(pool, nil)
	p := ExternalPerson{Issuer: "https://idp", Subject: "s-1", Username: "Ada", Email: "ada@example.com",
		EmailVerified: true, Role: runtime.RoleReviewer, Tokens: ProviderTokens{Access: "at", Refresh: "rt"}}
	actor, epoch, err := ids.SignIn(ctx, p, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if actor.UserUID == local || actor.Name != "ada-2" || actor.Role != runtime.RoleReviewer {
		t.Fatalf("first sign-in = %+v, want a new account ada-2 (reviewer), not the local ada", actor)
	}
	again, epoch2, err := ids.SignIn(ctx, ExternalPerson{Issuer: p.Issuer, Subject: p.Subject, Username: "someone-else", Role: runtime.RoleAdmin}, "")
	if err != nil {
		t.Fatal(err)
	}
	if again.UserUID != actor.UserUID || again.Role != runtime.RoleAdmin || epoch2 != epoch+1 {
		t.Fatalf("second sign-in = %+v epoch %d, want the same account as admin with epoch %d", again, epoch2, epoch+1)
	}
	other, _, err := ids.SignIn(ctx, ExternalPerson{Issuer: "https://other-idp", Subject: p.Subject, Username: "ada", Role: runtime.RoleSupport}, "")
	if err != nil || other.UserUID == actor.UserUID || other.UserUID == local {
		t.Fatalf("same subject at another issuer = %+v, %v; want a third account", other, err)
	}
	link, err := ids.Linked(ctx, actor.UserUID)
	if err != nil || link.Subject != "s-1" {
		t.Fatalf("Linked = %+v, %v", link, err)
	}
	if _, err := ids.Linked(ctx, local); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Linked of a local account: %v, want ErrNotFound", err)
	}
	if err := accounts.ResetPassword(ctx, actor.UserUID, "another long passphrase for runsdesk", nil); !errors.Is(err, ErrExternalAccount) {
		t.Errorf("ResetPassword of an OIDC account: %v, want ErrExternalAccount", err)
	}
	if err := accounts.ResetPassword(ctx, local, "another long passphrase for runsdesk", nil); err != nil {
		t.Errorf("ResetPassword of a local account: %v", err)
	}
	if _, _, err := accounts.Authenticate(ctx, "ada-2", ""); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("password sign-in of an OIDC account: %v, want ErrBadCredentials", err)
	}
	if _, err := accounts.CreateUser(ctx, "root", "a long test passphrase for runsdesk", runtime.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := accounts.DisableUser(ctx, actor.UserUID, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ids.SignIn(ctx, p, ""); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("sign-in of a disabled account: %v, want ErrNotFound", err)
	}
}
