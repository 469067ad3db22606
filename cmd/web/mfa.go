package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"runsdesk/app"
	"runsdesk/db"
	"runsdesk/runtime"
)

// twoFactor is serve's two-factor sign-in configuration (--require-mfa, --mfa-always).
type twoFactor struct {
	Require string
	Always  bool
}

func (b *binder) twoFactor(m *twoFactor) {
	b.String(&m.Require, "require-mfa")
	b.Bool(&m.Always, "mfa-always")
}

// config returns the application's configuration of the flags: --require-mfa is a
// comma-separated list of person roles.
func (m twoFactor) config() (app.MFAConfig, error) {
	cfg := app.MFAConfig{Always: m.Always}
	for r := range strings.SplitSeq(m.Require, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		if !personRole(r) {
			return cfg, fmt.Errorf("--require-mfa: %q is not a role; list admin, reviewer or support, e.g. admin,reviewer", r)
		}
		cfg.Require = append(cfg.Require, runtime.Role(r))
	}
	return cfg, nil
}

// checkKeys refuses --require-mfa without sealing keys (RUNSDESK_KEYS or RUNSDESK_KEYS_FILE in
// getenv): nobody could enrol, so nobody of those roles could sign in.
func checkKeys(cfg app.MFAConfig, getenv func(string) string) error {
	if len(cfg.Require) > 0 && getenv("RUNSDESK_KEYS") == "" && getenv("RUNSDESK_KEYS_FILE") == "" {
		return errors.New("--require-mfa needs sealing keys, which seal the TOTP secrets: set RUNSDESK_KEYS or RUNSDESK_KEYS_FILE " +
			"(`runsdesk keys generate` prints a key; `make run`'s demo writes a key file under ./var)")
	}
	return nil
}

// runUserMFAReset removes a person's second factor and recovery codes and ends their
// sessions; they may enrol again at /account/security (under --require-mfa they must, at their
// next sign-in). Audited.
func runUserMFAReset(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user mfa-reset", args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, ok, code := d.user(ctx, args[0])
		if !ok {
			return code
		}
		err := db.NewFactors(d.conn.pool, d.conn.keys, nil).Reset(ctx, u.UID, d.change(describeUser(u)+": second factor removed"))
		if errors.Is(err, runtime.ErrNotFound) {
			if aerr := d.record(ctx, "failure", describeUser(u)+" has no second factor"); aerr != nil {
				return d.fail("%v", aerr)
			}
			fmt.Fprintf(d.c.stdout, "User %q has no second factor; nothing changed.\n", u.Username)
			return exitOK
		}
		if code := d.done(ctx, err, userLabel(u.Username)); code != exitOK {
			return code
		}
		fmt.Fprintf(d.c.stdout, "The second factor of %q is removed and their sessions have ended; they may enrol again at /account/security.\n", u.Username)
		return exitOK
	}}.run(ctx, c, args)
}
