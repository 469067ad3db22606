package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
)

// NewToken is a service account to create: its name, scopes and when its token stops working
// (the zero time: never).
type NewToken struct {
	Name    string
	Scopes  []string
	Expires time.Time
}

// ParseScopes reads a comma-separated scope list: at least one of runtime.Scopes.
func ParseScopes(list string) ([]string, error) {
	var scopes []string
	for s := range strings.SplitSeq(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(runtime.Scopes(), s) {
			return nil, refuse("scopes", fmt.Sprintf("unknown scope %q (want %s)", s, strings.Join(runtime.Scopes(), ", ")), nil)
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) == 0 {
		return nil, refuse("scopes", "at least one scope is required: one or more of "+strings.Join(runtime.Scopes(), ", "), nil)
	}
	return scopes, nil
}

// ParseExpiry is when a token created at now with the expiry in stops working: a positive
// duration ("90d", "12h") from now, or a date (YYYY-MM-DD, the start of that day in UTC) after
// now; "" is never (the zero time).
func ParseExpiry(in string, now time.Time) (time.Time, error) {
	if in == "" {
		return time.Time{}, nil
	}
	if day, err := time.Parse(time.DateOnly, in); err == nil {
		if !day.After(now) {
			return time.Time{}, refuse("expires", fmt.Sprintf("%s is not after today", in), nil)
		}
		return day, nil
	}
	d, err := apply.ParseDuration(in)
	if err != nil || d <= 0 {
		return time.Time{}, refuse("expires", fmt.Sprintf("%q is not a positive duration like 90d or 12h, or a date like 2030-01-31", in), nil)
	}
	return now.Add(d), nil
}

// tokenLabel names a service account in messages and audit reasons.
func tokenLabel(name string) string { return fmt.Sprintf("service account %q", name) }

// ServiceAccounts lists every service account, audited (token_list).
func (d *Desk) ServiceAccounts(ctx context.Context, by By) ([]ServiceAccount, error) {
	accounts, err := d.store.ServiceAccounts(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.record(ctx, by, ActionTokenList, "success", fmt.Sprintf("service accounts listed: %d", len(accounts))); err != nil {
		return nil, err
	}
	return accounts, nil
}

// CreateToken creates the service account t and returns its token, shown once and never
// stored, audited (token_create). A name in use or refused by the policy is a *Refusal.
func (d *Desk) CreateToken(ctx context.Context, by By, t NewToken) (string, error) {
	switch {
	case t.Name == "":
		return "", refuse("name", "the name is required", nil)
	case len(t.Scopes) == 0:
		return "", refuse("scopes", "at least one scope is required", nil)
	}
	until := "never expires"
	if !t.Expires.IsZero() {
		until = "expires " + t.Expires.UTC().Format(time.RFC3339)
	}
	reason := fmt.Sprintf("%s: scopes %s; %s", tokenLabel(t.Name), strings.Join(t.Scopes, ","), until)
	token, err := d.store.CreateToken(ctx, t, change(by, ActionTokenCreate, reason))
	if errors.Is(err, ErrTaken) {
		return "", refuse("name", fmt.Sprintf("a service account named %q already exists", t.Name), ErrTaken)
	}
	if reason, ok := policyReason(err); ok {
		return "", refuse("name", reason, nil)
	}
	return token, err
}

// serviceAccount looks up the account an operation names; an unknown one is audited.
func (d *Desk) serviceAccount(ctx context.Context, by By, action, name string) (ServiceAccount, error) {
	sa, err := d.store.ServiceAccount(ctx, name)
	if errors.Is(err, runtime.ErrNotFound) {
		return sa, d.missing(ctx, by, action, tokenLabel(name))
	}
	return sa, err
}

// RevokeToken disables the service account: its token is refused from now on, audited
// (token_revoke); changed is false when it is revoked already.
func (d *Desk) RevokeToken(ctx context.Context, by By, name string) (sa ServiceAccount, changed bool, err error) {
	if sa, err = d.serviceAccount(ctx, by, ActionTokenRevoke, name); err != nil || sa.Disabled {
		return sa, false, err
	}
	err = d.store.RevokeToken(ctx, sa.Name, change(by, ActionTokenRevoke, tokenLabel(sa.Name)))
	return sa, err == nil, d.done(ctx, by, ActionTokenRevoke, tokenLabel(sa.Name), err)
}

// RotateToken gives the service account a new token (returned once) with the lifetime it was
// created with from now; the old one is refused and a revoked account works again, audited
// (token_rotate). It returns the account as it was.
func (d *Desk) RotateToken(ctx context.Context, by By, name string) (ServiceAccount, string, error) {
	sa, err := d.serviceAccount(ctx, by, ActionTokenRotate, name)
	if err != nil {
		return sa, "", err
	}
	reason := tokenLabel(sa.Name)
	if sa.Disabled {
		reason += " (was revoked)"
	}
	token, err := d.store.RotateToken(ctx, sa.Name, change(by, ActionTokenRotate, reason))
	if err := d.done(ctx, by, ActionTokenRotate, tokenLabel(sa.Name), err); err != nil {
		return sa, "", err
	}
	return sa, token, nil
}
