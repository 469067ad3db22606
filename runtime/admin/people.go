package admin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"

	"runsdesk/runtime"
)

// NewPerson is a person to add. An empty Password is generated (and returned once).
type NewPerson struct {
	Username string
	Role     runtime.Role
	Email    string
	Password string
}

// Added is a person just added: their uid and username as stored, and the password when it
// was generated (Generated), which is never stored in clear nor shown again.
type Added struct {
	UID       int64
	Username  string
	Password  string
	Generated bool
}

// CheckRole refuses a role a person may not have (admin, reviewer or support).
func CheckRole(role string) error {
	switch runtime.Role(role) {
	case runtime.RoleAdmin, runtime.RoleReviewer, runtime.RoleSupport:
		return nil
	}
	return refuse("role", fmt.Sprintf("the role must be admin, reviewer or support, got %q", role), nil)
}

// CheckEmail refuses what is not a bare address like name@example.com ("" is none), as
// notification rules accept them.
func CheckEmail(email string) error {
	if email == "" {
		return nil
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		return refuse("email", fmt.Sprintf("%q is not an email address like name@example.com", email), nil)
	}
	return nil
}

// GeneratePassword returns 32 characters from 24 random bytes (192 bits).
func GeneratePassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// userLabel names a person in messages: `user "ann"`.
func userLabel(username string) string { return fmt.Sprintf("user %q", username) }

// describe names p in audit reasons: `user "ann" (uid 3)`.
func describe(p Person) string { return fmt.Sprintf("%s (uid %d)", userLabel(p.Username), p.UID) }

// People lists every person, audited (user_list).
func (d *Desk) People(ctx context.Context, by By) ([]Person, error) {
	people, err := d.store.People(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.record(ctx, by, ActionUserList, "success", fmt.Sprintf("users listed: %d", len(people))); err != nil {
		return nil, err
	}
	return people, nil
}

// Add adds p, audited (user_add). A bad role or address, a username in use or a password
// the policy refuses is a *Refusal.
func (d *Desk) Add(ctx context.Context, by By, p NewPerson) (Added, error) {
	if p.Username == "" {
		return Added{}, refuse("username", "the username is required", nil)
	}
	if err := CheckRole(string(p.Role)); err != nil {
		return Added{}, err
	}
	if err := CheckEmail(p.Email); err != nil {
		return Added{}, err
	}
	added := Added{Password: p.Password}
	if p.Password == "" {
		pw, err := GeneratePassword()
		if err != nil {
			return Added{}, err
		}
		p.Password, added.Password, added.Generated = pw, pw, true
	}
	uid, err := d.store.AddPerson(ctx, p, func(uid int64, username string) *runtime.AuditRecord {
		added.Username = username
		return change(by, ActionUserAdd, fmt.Sprintf("%s: role %s", describe(Person{UID: uid, Username: username}), p.Role))
	})
	if reason, ok := policyReason(err); ok {
		field := ""
		if added.Generated {
			field = "username"
		}
		return Added{}, refuse(field, reason, nil)
	}
	if errors.Is(err, ErrTaken) {
		return Added{}, refuse("username", fmt.Sprintf("the username %q is already taken", p.Username), ErrTaken)
	}
	if err != nil {
		return Added{}, err
	}
	added.UID = uid
	return added, nil
}

// person looks up the person an operation names; an unknown one is audited (action, failure),
// as is an action that would change what TYPO3 manages of a TYPO3 account (ErrManagedInTYPO3).
func (d *Desk) person(ctx context.Context, by By, action, username string) (Person, error) {
	p, err := d.store.Person(ctx, username)
	if errors.Is(err, runtime.ErrNotFound) {
		return Person{}, d.missing(ctx, by, action, userLabel(username))
	}
	if err == nil && p.Issuer == TYPO3Issuer && managesAccount(action) {
		reason := fmt.Sprintf("%s is a TYPO3 backend account: %v", userLabel(p.Username), ErrManagedInTYPO3)
		if err := d.record(ctx, by, action, "denied", reason); err != nil {
			return Person{}, err
		}
		return Person{}, refuse("", reason, ErrManagedInTYPO3)
	}
	return p, err
}

// lastAdmin is the refusal of a change that would leave no enabled admin.
func lastAdmin(err error) error {
	if errors.Is(err, ErrLastAdmin) {
		return refuse("", ErrLastAdmin.Error(), ErrLastAdmin)
	}
	return err
}

// Disable stops the person signing in and ends their sessions, audited (user_disable). It
// returns the person as they were. Leaving no enabled admin is refused (ErrLastAdmin).
func (d *Desk) Disable(ctx context.Context, by By, username string) (Person, error) {
	p, err := d.person(ctx, by, ActionUserDisable, username)
	if err != nil {
		return p, err
	}
	err = d.store.DisablePerson(ctx, p.UID, change(by, ActionUserDisable, describe(p)))
	return p, lastAdmin(d.done(ctx, by, ActionUserDisable, userLabel(p.Username), err))
}

// Enable lets a disabled person sign in again, audited (user_enable); changed is false (and
// nothing is written) when they are not disabled.
func (d *Desk) Enable(ctx context.Context, by By, username string) (p Person, changed bool, err error) {
	if p, err = d.person(ctx, by, ActionUserEnable, username); err != nil || !p.Disabled {
		return p, false, err
	}
	err = d.store.EnablePerson(ctx, p.UID, change(by, ActionUserEnable, describe(p)))
	return p, err == nil, d.done(ctx, by, ActionUserEnable, userLabel(p.Username), err)
}

// SetRole changes the person's role and ends their sessions, audited (user_role); changed
// is false when they have it already. Leaving no enabled admin is refused (ErrLastAdmin).
func (d *Desk) SetRole(ctx context.Context, by By, username, role string) (p Person, changed bool, err error) {
	if err := CheckRole(role); err != nil {
		return Person{}, false, err
	}
	if p, err = d.person(ctx, by, ActionUserRole, username); err != nil || p.Role == runtime.Role(role) {
		return p, false, err
	}
	reason := fmt.Sprintf("%s: role %s → %s", describe(p), p.Role, role)
	err = d.store.SetRole(ctx, p.UID, runtime.Role(role), change(by, ActionUserRole, reason))
	return p, err == nil, lastAdmin(d.done(ctx, by, ActionUserRole, userLabel(p.Username), err))
}

// ResetPassword sets password ("" generates one, returned once as Added.Password), ends the
// person's sessions, forgets their failed sign-ins and requires a new password at their next
// sign-in, audited (user_reset_password). A password the policy refuses, or a person who
// signs in with an identity provider, is a *Refusal.
func (d *Desk) ResetPassword(ctx context.Context, by By, username, password string) (Person, Added, error) {
	p, err := d.person(ctx, by, ActionUserResetPassword, username)
	if err != nil {
		return p, Added{}, err
	}
	added := Added{UID: p.UID, Username: p.Username, Password: password}
	if password == "" {
		if added.Password, err = GeneratePassword(); err != nil {
			return p, Added{}, err
		}
		added.Generated = true
	}
	err = d.store.ResetPassword(ctx, p.UID, added.Password, change(by, ActionUserResetPassword, describe(p)))
	if reason, ok := policyReason(err); ok {
		return p, Added{}, refuse("password", reason, nil)
	}
	if err := d.done(ctx, by, ActionUserResetPassword, userLabel(p.Username), err); err != nil {
		return p, Added{}, err
	}
	return p, added, nil
}

// EndSessions signs the person out everywhere without disabling them, audited
// (user_end_sessions).
func (d *Desk) EndSessions(ctx context.Context, by By, username string) (Person, error) {
	p, err := d.person(ctx, by, ActionUserEndSessions, username)
	if err != nil {
		return p, err
	}
	err = d.store.EndSessions(ctx, p.UID, change(by, ActionUserEndSessions, describe(p)))
	return p, d.done(ctx, by, ActionUserEndSessions, userLabel(p.Username), err)
}

// ResetFactor removes the person's second factor and recovery codes and ends their
// sessions, audited (user_mfa_reset); changed is false for a person without one, audited as a
// failure.
func (d *Desk) ResetFactor(ctx context.Context, by By, username string) (p Person, changed bool, err error) {
	if p, err = d.person(ctx, by, ActionUserMFAReset, username); err != nil {
		return p, false, err
	}
	err = d.store.ResetFactor(ctx, p.UID, change(by, ActionUserMFAReset, describe(p)+": second factor removed"))
	if errors.Is(err, runtime.ErrNotFound) {
		return p, false, d.record(ctx, by, ActionUserMFAReset, "failure", describe(p)+" has no second factor")
	}
	return p, err == nil, err
}

// SetEmail sets the person's address for the notifications that concern them ("" removes
// it), audited (user_email); changed is false when they have it already.
func (d *Desk) SetEmail(ctx context.Context, by By, username, email string) (p Person, changed bool, err error) {
	if err := CheckEmail(email); err != nil {
		return Person{}, false, err
	}
	if p, err = d.person(ctx, by, ActionUserEmail, username); err != nil || p.Email == email {
		return p, false, err
	}
	err = d.store.SetEmail(ctx, p.UID, email, change(by, ActionUserEmail, describe(p)+": email changed"))
	return p, err == nil, d.done(ctx, by, ActionUserEmail, userLabel(p.Username), err)
}
