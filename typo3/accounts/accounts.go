// Package accounts signs people in to runsdesk beside a TYPO3 site (--typo3): with their TYPO3
// backend account (typo3/backend, read only) or with an account of runsdesk's own.
//
// A TYPO3 account is an outside identity, as one of an OpenID provider is: at its first
// sign-in runsdesk makes a person of its own for it (db.Identities, issuer Issuer, subject the
// be_users uid), with no password of runsdesk's, and at every sign-in it sets that person's role
// to the one the account's TYPO3 groups give (a changed role ends their other sessions). A
// username that names one of runsdesk's own accounts (one not linked to an outside identity)
// signs in as that account; every other username is looked up in TYPO3. During a session the
// TYPO3 account is checked again at most once a minute: disabled, deleted, expired or out of
// every mapped group in TYPO3, the person loses the session at their next request.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"runsdesk/cache"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/typo3/backend"
)

// Issuer is the issuer runsdesk links TYPO3 backend accounts under (tx_runsdesk_identity).
const Issuer = admin.TYPO3Issuer

// RecheckInterval is how long a session's TYPO3 account, once checked, counts as still able to
// use runsdesk.
const RecheckInterval = time.Minute

// maxConcurrentChecks bounds the TYPO3 password checks running at once: TYPO3's argon2 hashes
// take 64 MiB each.
const maxConcurrentChecks = 4

// maxRechecked bounds the people whose last TYPO3 check is remembered.
const maxRechecked = 10_000

// Accounts is handlers.Accounts beside a TYPO3 site. Safe for concurrent use.
type Accounts struct {
	own        *db.Accounts
	identities *db.Identities
	site       *backend.Reader
	now        func() time.Time
	log        *slog.Logger
	slots      chan struct{}
	// refusals remembers, per person, why their last TYPO3 check refused them ("": it did not).
	refusals *cache.Cache[int64, string]
}

// New returns Accounts signing people in with site's TYPO3 accounts, linked through
// identities, and with own's accounts; now defaults to time.Now.
func New(own *db.Accounts, identities *db.Identities, site *backend.Reader, now func() time.Time, log *slog.Logger) *Accounts {
	if now == nil {
		now = time.Now
	}
	return &Accounts{own: own, identities: identities, site: site, now: now, log: log,
		slots:    make(chan struct{}, maxConcurrentChecks),
		refusals: cache.New[int64, string](cache.Options{Max: maxRechecked, TTL: RecheckInterval, Now: now})}
}

// Authenticate signs a person in: as runsdesk's own account when one not linked to an outside
// identity has the username, else as the TYPO3 backend account with that username and
// password. Every refusal wraps db.ErrBadCredentials (so runtime.ErrNotFound); why a TYPO3
// account was refused is logged with its uid. The actor of a TYPO3 account with TYPO3's own
// two-factor sign-in has MFARequired set.
func (a *Accounts) Authenticate(ctx context.Context, username, password string) (runtime.Actor, int64, error) {
	own, err := a.ownAccount(ctx, username)
	if err != nil {
		return runtime.Actor{}, 0, err
	}
	if own {
		return a.own.Authenticate(ctx, username, password)
	}
	account, err := a.signInToSite(ctx, username, password)
	if err != nil {
		return runtime.Actor{}, 0, err
	}
	actor, epoch, err := a.identities.SignIn(ctx, person(account), "")
	if errors.Is(err, runtime.ErrNotFound) {
		a.log.Info("TYPO3 sign-in refused", "be_users_uid", account.UID, "reason", "its runsdesk person is disabled")
		return runtime.Actor{}, 0, fmt.Errorf("typo3 accounts: be_users uid %d: %w", account.UID, db.ErrBadCredentials)
	}
	if err != nil {
		return runtime.Actor{}, 0, fmt.Errorf("typo3 accounts: be_users uid %d: %w", account.UID, err)
	}
	a.refusals.Put(actor.UserUID, "")
	actor.MFARequired = account.MFA
	return actor, epoch, nil
}

// ownAccount reports whether username names one of runsdesk's own accounts: a person not
// linked to an outside identity.
func (a *Accounts) ownAccount(ctx context.Context, username string) (bool, error) {
	u, err := a.own.AccountByUsername(ctx, username)
	if errors.Is(err, runtime.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = a.identities.Linked(ctx, u.UID)
	if errors.Is(err, runtime.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// signInToSite checks username and password against the TYPO3 site, at most
// maxConcurrentChecks at a time.
func (a *Accounts) signInToSite(ctx context.Context, username, password string) (backend.Account, error) {
	select {
	case a.slots <- struct{}{}:
		defer func() { <-a.slots }()
	case <-ctx.Done():
		return backend.Account{}, ctx.Err()
	}
	account, err := a.site.SignIn(ctx, username, password, a.now())
	if refused(err) {
		if !errors.Is(err, backend.ErrBadCredentials) {
			a.log.Info("TYPO3 sign-in refused", "reason", err.Error())
		}
		return backend.Account{}, fmt.Errorf("typo3 accounts: %w", db.ErrBadCredentials)
	}
	return account, err
}

// refused reports whether err is a TYPO3 account's refusal (not a failure of the database).
func refused(err error) bool {
	for _, r := range []error{backend.ErrBadCredentials, backend.ErrAmbiguous, backend.ErrHash, backend.ErrDisabled,
		backend.ErrNotStarted, backend.ErrExpired, backend.ErrNoRole, backend.ErrNotFound} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

// person is the outside identity of a TYPO3 account.
func person(account backend.Account) db.ExternalPerson {
	return db.ExternalPerson{Issuer: Issuer, Subject: strconv.FormatInt(account.UID, 10), Username: account.Username,
		Name: account.RealName, Email: account.Email, EmailVerified: account.Email != "", Role: account.Role}
}

// SessionActor is db.Accounts' SessionActor, and for a person signed in with a TYPO3 account
// also that account's check (at most once per RecheckInterval): an account that may no longer
// use runsdesk is an error wrapping runtime.ErrNotFound; one whose groups now give another role
// has its role synced, which ends its sessions.
func (a *Accounts) SessionActor(ctx context.Context, uid int64) (runtime.Actor, int64, error) {
	actor, epoch, err := a.own.SessionActor(ctx, uid)
	if err != nil {
		return actor, epoch, err
	}
	refusal, err := a.refusals.GetOrLoad(uid, func() (string, error) { return a.recheck(ctx, actor) })
	if err != nil {
		return runtime.Actor{}, 0, err
	}
	if refusal != "" {
		return runtime.Actor{}, 0, fmt.Errorf("typo3 accounts: person %d: %s: %w", uid, refusal, runtime.ErrNotFound)
	}
	return actor, epoch, nil
}

// recheck returns why actor may no longer use runsdesk through their TYPO3 account ("": they
// may, or they do not sign in with one); an error is a failure of the database.
func (a *Accounts) recheck(ctx context.Context, actor runtime.Actor) (string, error) {
	link, err := a.identities.Linked(ctx, actor.UserUID)
	if errors.Is(err, runtime.ErrNotFound) || err == nil && link.Issuer != Issuer {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	uid, err := strconv.ParseInt(link.Subject, 10, 64)
	if err != nil {
		return fmt.Sprintf("linked to be_users uid %q, which is not a number", link.Subject), nil
	}
	account, err := a.site.Account(ctx, uid, a.now())
	if refused(err) {
		return err.Error(), nil
	}
	if err != nil {
		return "", err
	}
	if account.Role != actor.Role {
		if err := a.identities.Vouched(ctx, actor.UserUID, account.Role, db.ProviderTokens{}, ""); err != nil {
			return "", err
		}
		return fmt.Sprintf("be_users uid %d: its TYPO3 groups now give role %s", uid, account.Role), nil
	}
	return "", nil
}

// ChangePassword is db.Accounts' ChangePassword: a TYPO3 account's person has no password of
// runsdesk's, so theirs is refused as the db refuses an outside identity's.
func (a *Accounts) ChangePassword(ctx context.Context, uid int64, current, next string) (int64, error) {
	return a.own.ChangePassword(ctx, uid, current, next)
}

// SetTimeZone is db.Accounts' SetTimeZone.
func (a *Accounts) SetTimeZone(ctx context.Context, uid int64, name string) error {
	return a.own.SetTimeZone(ctx, uid, name)
}
