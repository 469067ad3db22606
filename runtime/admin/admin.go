// Package admin is the administration of people and service accounts that the CLI's `user` and
// `token` commands and the /admin pages share: the checks of what is typed, generated passwords
// and tokens, and each change written with its audit row (the actor, action, outcome and reason
// are the same whoever asks; only the actor and their address differ).
package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
)

// Audit actions of the operations, the CLI command's name with underscores.
const (
	ActionUserList          = "user_list"
	ActionUserAdd           = "user_add"
	ActionUserDisable       = "user_disable"
	ActionUserEnable        = "user_enable"
	ActionUserRole          = "user_role"
	ActionUserResetPassword = "user_reset_password"
	ActionUserEndSessions   = "user_end_sessions"
	ActionUserMFAReset      = "user_mfa_reset"
	ActionUserEmail         = "user_email"
	ActionTokenList         = "token_list"
	ActionTokenCreate       = "token_create"
	ActionTokenRevoke       = "token_revoke"
	ActionTokenRotate       = "token_rotate"
)

// ErrTaken is the error a Store wraps when a username or service-account name is in use.
var ErrTaken = errors.New("name already taken")

// ErrLastAdmin is the error a Store returns when disabling or demoting a person would leave
// no enabled admin.
var ErrLastAdmin = errors.New("this would leave no enabled admin: enable or add another admin first")

// Person is a person who may sign in, as the listings show them. LastLogin and Created are
// unix seconds (LastLogin 0: never signed in).
type Person struct {
	UID                int64
	Username           string
	Role               runtime.Role
	Email              string
	Disabled           bool
	MustChangePassword bool
	// MFA reports a confirmed second factor.
	MFA       bool
	LastLogin int64
	Created   int64
	// Issuer is the issuer of the outside identity the person signs in with (an OpenID
	// provider's, or TYPO3Issuer); "" for a person with a password of runsdesk's.
	Issuer string
}

// TYPO3Issuer is the issuer of the people who sign in with a TYPO3 backend account beside a
// TYPO3 site (--typo3): their account, role, state and address are managed in TYPO3.
const TYPO3Issuer = "typo3:be_users"

// ErrManagedInTYPO3 refuses to change, in runsdesk, an account TYPO3 manages.
var ErrManagedInTYPO3 = errors.New("manage this account in TYPO3")

// managesAccount reports whether action changes what TYPO3 manages of a TYPO3 account: its
// state, role, password or address (not runsdesk's own sessions or second factor).
func managesAccount(action string) bool {
	switch action {
	case ActionUserDisable, ActionUserEnable, ActionUserRole, ActionUserResetPassword, ActionUserEmail:
		return true
	}
	return false
}

// ServiceAccount is a machine client of the API without its token. Created, LastUsed and
// Expires are unix seconds (0: never used; never expires).
type ServiceAccount struct {
	Name     string
	Scopes   []string
	Created  int64
	LastUsed int64
	Expires  int64
	Disabled bool
}

// Store keeps the accounts (db.Admin). Each change with an audit record writes its row in the
// same transaction; a missing person or service account is an error wrapping
// runtime.ErrNotFound, a policy violation an error with a PolicyViolation method whose text
// may be shown.
type Store interface {
	People(ctx context.Context) ([]Person, error)
	Person(ctx context.Context, username string) (Person, error)
	// AddPerson creates the person (canonical username) and returns their uid; a name in
	// use wraps ErrTaken.
	AddPerson(ctx context.Context, p NewPerson, audit func(uid int64, username string) *runtime.AuditRecord) (int64, error)
	// DisablePerson and SetRole refuse with ErrLastAdmin to leave no enabled admin.
	DisablePerson(ctx context.Context, uid int64, audit *runtime.AuditRecord) error
	EnablePerson(ctx context.Context, uid int64, audit *runtime.AuditRecord) error
	SetRole(ctx context.Context, uid int64, role runtime.Role, audit *runtime.AuditRecord) error
	// ResetPassword sets the password, ends the person's sessions, requires a new password
	// at the next sign-in and forgets their failed sign-ins.
	ResetPassword(ctx context.Context, uid int64, password string, audit *runtime.AuditRecord) error
	EndSessions(ctx context.Context, uid int64, audit *runtime.AuditRecord) error
	// ResetFactor removes the second factor; a person without one is runtime.ErrNotFound.
	ResetFactor(ctx context.Context, uid int64, audit *runtime.AuditRecord) error
	SetEmail(ctx context.Context, uid int64, email string, audit *runtime.AuditRecord) error
	ServiceAccounts(ctx context.Context) ([]ServiceAccount, error)
	ServiceAccount(ctx context.Context, name string) (ServiceAccount, error)
	// CreateToken creates the service account and returns its token; a name in use wraps
	// ErrTaken.
	CreateToken(ctx context.Context, t NewToken, audit *runtime.AuditRecord) (string, error)
	// RevokeToken disables the account; one already disabled is runtime.ErrNotFound.
	RevokeToken(ctx context.Context, name string, audit *runtime.AuditRecord) error
	// RotateToken gives the account a new token of the same lifetime and enables it.
	RotateToken(ctx context.Context, name string, audit *runtime.AuditRecord) (string, error)
	// Record appends an audit row of an operation that changed nothing.
	Record(ctx context.Context, actor runtime.Actor, ip, action, runUUID, outcome, reason string) error
}

// By is who asks: the actor the audit rows name and their address ("" for the CLI).
type By struct {
	Actor runtime.Actor
	IP    string
}

// Desk carries out the operations on a Store. It is safe for concurrent use.
type Desk struct {
	store Store
	now   func() time.Time
}

// New returns a Desk on store; now defaults to time.Now.
func New(store Store, now func() time.Time) *Desk {
	if now == nil {
		now = time.Now
	}
	return &Desk{store: store, now: now}
}

// Refusal is an operation refused for what was asked: Reason is a sentence for the person,
// Field the input it concerns ("" for none). It wraps the cause (runtime.ErrNotFound, ErrTaken,
// ErrLastAdmin, or nil for a check of the input).
type Refusal struct {
	Field  string
	Reason string
	cause  error
}

func (r *Refusal) Error() string { return r.Reason }

// Unwrap returns the refusal's cause.
func (r *Refusal) Unwrap() error { return r.cause }

// refuse is a Refusal of field with reason.
func refuse(field, reason string, cause error) *Refusal {
	return &Refusal{Field: field, Reason: reason, cause: cause}
}

// policyReason returns the text of err when it is a policy violation of the store.
func policyReason(err error) (string, bool) {
	var p interface{ PolicyViolation() bool }
	if errors.As(err, &p) && p.PolicyViolation() {
		return err.Error(), true
	}
	return "", false
}

// record writes the audit row of an operation that changed nothing.
func (d *Desk) record(ctx context.Context, by By, action, outcome, reason string) error {
	if err := d.store.Record(ctx, by.Actor, by.IP, action, "", outcome, reason); err != nil {
		return fmt.Errorf("write the audit row: %w", err)
	}
	return nil
}

// change is the audit record of a successful change, written with it.
func change(by By, action, reason string) *runtime.AuditRecord {
	return &runtime.AuditRecord{Actor: by.Actor, AuditNote: runtime.AuditNote{Action: action, IP: by.IP, Outcome: "success", Reason: reason}}
}

// missing audits an operation on a target that does not exist and returns its refusal.
func (d *Desk) missing(ctx context.Context, by By, action, what string) error {
	if err := d.record(ctx, by, action, "failure", what+" not found"); err != nil {
		return fmt.Errorf("%s not found; %w", what, err)
	}
	return refuse("", what+" not found", runtime.ErrNotFound)
}

// done maps a store error of a change: a target gone since it was read is audited as missing.
func (d *Desk) done(ctx context.Context, by By, action, what string, err error) error {
	if errors.Is(err, runtime.ErrNotFound) {
		return d.missing(ctx, by, action, what)
	}
	return err
}
