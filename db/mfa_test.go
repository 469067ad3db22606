package db

import (
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime"
)

const testTOTPSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

// enrolled returns Factors with keys and a person whose factor is confirmed at step 100 with
// the recovery code hashes.
func enrolled(t *testing.T, hashes ...string) (*Factors, *Accounts, int64) {
	t.Helper()
	a, pool := newAccounts(t)
	uid := mustCreateUser(t, a, "ann", runtime.RoleAdmin)
	f := NewFactors(pool, keyring(t, "k1"), nil)
	if err := f.Begin(t.Context(), uid, testTOTPSecret); err != nil {
		t.Fatal(err)
	}
	if err := f.Confirm(t.Context(), uid, 100, hashes, cliAudit("mfa_enrolled", "test")); err != nil {
		t.Fatal(err)
	}
	return f, a, uid
}

// TestFactorIsSealedAndBoundToThePerson: without keys enrolment is refused; with keys the
// stored secret is an envelope that opens for its person only, and a waiting factor may be
// replaced until it is confirmed.
func TestFactorIsSealedAndBoundToThePerson(t *testing.T) {
	a, pool := newAccounts(t)
	ann := mustCreateUser(t, a, "ann", runtime.RoleAdmin)
	bob := mustCreateUser(t, a, "bob", runtime.RoleReviewer)
	if err := NewFactors(pool, nil, nil).Begin(t.Context(), ann, testTOTPSecret); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("Begin without keys: %v; want ErrNoKeys", err)
	}
	f := NewFactors(pool, keyring(t, "k1"), nil)
	if _, err := f.Factor(t.Context(), ann); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Factor before enrolment: %v", err)
	}
	for _, secret := range []string{"AAAABBBBCCCCDDDD", testTOTPSecret} {
		if err := f.Begin(t.Context(), ann, secret); err != nil {
			t.Fatal(err)
		}
	}
	var stored string
	if err := pool.QueryRow(`SELECT secret FROM tx_runsdesk_totp WHERE be_user = ?`, ann).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "rdseal1:k1:") || strings.Contains(stored, testTOTPSecret) {
		t.Fatalf("stored secret %q is not an envelope", stored)
	}
	x, err := f.Factor(t.Context(), ann)
	if err != nil || x.Secret != testTOTPSecret || x.Confirmed {
		t.Fatalf("Factor = %+v, %v; want the second secret, unconfirmed", x, err)
	}
	if ok, err := f.Enrolled(t.Context(), ann); ok || err != nil {
		t.Fatalf("Enrolled before confirmation = %v, %v", ok, err)
	}
	if _, err := pool.Exec(`INSERT INTO tx_runsdesk_totp (be_user, secret, confirmed) VALUES (?, ?, 1)`, bob, stored); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Factor(t.Context(), bob); err == nil {
		t.Fatal("ann's sealed secret opens as bob's")
	}
	if err := f.Confirm(t.Context(), ann, 7, []string{"h1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Begin(t.Context(), ann, "AAAABBBBCCCCDDDD"); !errors.Is(err, ErrEnrolled) {
		t.Fatalf("Begin over a confirmed factor: %v; want ErrEnrolled", err)
	}
	if err := f.Confirm(t.Context(), ann, 8, nil, nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("second Confirm: %v; want ErrNotFound", err)
	}
	x, err = f.Factor(t.Context(), ann)
	if err != nil || !x.Confirmed || x.LastStep != 7 || x.RecoveryLeft != 1 {
		t.Fatalf("Factor = %+v, %v; want confirmed at step 7 with one recovery code", x, err)
	}
}

// TestStepIsAcceptedOnce: a step after the last one is accepted and recorded; the same or an
// earlier step is ErrStepUsed; of many uses of one step at once exactly one succeeds.
func TestStepIsAcceptedOnce(t *testing.T) {
	f, _, uid := enrolled(t)
	ctx := t.Context()
	for _, c := range []struct {
		step int64
		ok   bool
	}{{100, false}, {99, false}, {101, true}, {101, false}, {103, true}} {
		err := f.UseStep(ctx, uid, c.step)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrStepUsed)) {
			t.Fatalf("UseStep(%d) = %v; want ok %v", c.step, err, c.ok)
		}
	}
	won := raceLosing(t, 8, ErrStepUsed, func(int) error { return f.UseStep(ctx, uid, 104) })
	if won != 1 {
		t.Fatalf("%d of 8 concurrent uses of one step succeeded, want exactly 1", won)
	}
}

// TestRecoveryCodeIsUsedOnce: a code is accepted once (audited in the same transaction), of
// many uses of one code at once exactly one succeeds, and replacing the codes voids the old.
func TestRecoveryCodeIsUsedOnce(t *testing.T) {
	f, _, uid := enrolled(t, "h1", "h2", "h3")
	ctx := t.Context()
	left, err := f.UseRecoveryCode(ctx, uid, "h1", cliAudit("recovery_code_used", "test"))
	if err != nil || left != 2 {
		t.Fatalf("first use = %d, %v; want 2 left", left, err)
	}
	if _, err := f.UseRecoveryCode(ctx, uid, "h1", nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("second use: %v; want ErrNotFound", err)
	}
	if _, err := f.UseRecoveryCode(ctx, uid, "nope", nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("unknown code: %v; want ErrNotFound", err)
	}
	won := raceLosing(t, 8, runtime.ErrNotFound, func(int) error { _, err := f.UseRecoveryCode(ctx, uid, "h2", nil); return err })
	if won != 1 {
		t.Fatalf("%d of 8 concurrent uses of one recovery code succeeded, want exactly 1", won)
	}
	if err := f.ReplaceRecoveryCodes(ctx, uid, []string{"n1", "n2"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.UseRecoveryCode(ctx, uid, "h3", nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("an old code after regeneration: %v; want ErrNotFound", err)
	}
	if x, err := f.Factor(ctx, uid); err != nil || x.RecoveryLeft != 2 {
		t.Fatalf("Factor = %+v, %v; want 2 recovery codes", x, err)
	}
	var audits int
	if err := f.db.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_audit WHERE action = 'recovery_code_used'`).Scan(&audits); err != nil || audits != 1 {
		t.Fatalf("%d recovery_code_used audit rows, %v; want 1", audits, err)
	}
}

// TestResetRemovesTheFactor: Reset removes the factor and the codes, ends the person's
// sessions and is audited; without a factor it is ErrNotFound.
func TestResetRemovesTheFactor(t *testing.T) {
	f, a, uid := enrolled(t, "h1")
	ctx := t.Context()
	before, err := a.UserByUID(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Reset(ctx, uid, cliAudit("mfa_reset", "test")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Factor(ctx, uid); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Factor after Reset: %v", err)
	}
	after, err := a.UserByUID(ctx, uid)
	if err != nil || after.SessionEpoch != before.SessionEpoch+1 {
		t.Fatalf("session epoch %d → %d, %v; want it bumped", before.SessionEpoch, after.SessionEpoch, err)
	}
	var codes int
	if err := f.db.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_recovery_code WHERE be_user = ?`, uid).Scan(&codes); err != nil || codes != 0 {
		t.Fatalf("%d recovery codes left, %v", codes, err)
	}
	if rows := auditRows(t, NewAudit(f.db, nil)); len(rows) != 2 || !strings.Contains(rows[1], "mfa_reset success") {
		t.Fatalf("audit rows %q; want the enrolment and the reset", rows)
	}
	if err := f.Reset(ctx, uid, nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("second Reset: %v; want ErrNotFound", err)
	}
}
