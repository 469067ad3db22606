package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"runsdesk/app"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/seal"
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
		if admin.CheckRole(r) != nil {
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
		u, changed, err := d.ops.ResetFactor(ctx, d.by(), args[0])
		switch {
		case err != nil:
			return d.fail("%v", err)
		case !changed:
			fmt.Fprintf(d.c.stdout, "User %q has no second factor; nothing changed.\n", u.Username)
		default:
			fmt.Fprintf(d.c.stdout, "The second factor of %q is removed and their sessions have ended; they may enrol again at /account/security.\n", u.Username)
		}
		return exitOK
	}}.run(ctx, c, args)
}

// demoKeyFile is where serve --demo keeps its sealing key under the data directory.
const demoKeyFile = "keys"

// demoKeys returns getenv for serve --demo: as it is when RUNSDESK_KEYS or RUNSDESK_KEYS_FILE
// is set, else naming DATA_DIR/keys as RUNSDESK_KEYS_FILE, which it writes (mode 0600, one new
// key) when it does not exist yet, so the demo desk seals its state and offers two-factor
// sign-in. path is the file used ("" when the environment set the keys).
func demoKeys(getenv func(string) string, dataDir string) (env func(string) string, path string, err error) {
	if getenv("RUNSDESK_KEYS") != "" || getenv("RUNSDESK_KEYS_FILE") != "" {
		return getenv, "", nil
	}
	path = filepath.Join(dataDir, demoKeyFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		line, err := seal.Generate("demo")
		if err != nil {
			return nil, "", err
		}
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, "", fmt.Errorf("demo key file: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, "", fmt.Errorf("demo key file: %w", err)
		}
		_, werr := fmt.Fprintf(f, "# sealing key of the demo desk (serve --demo) made by runsdesk\n%s\n", line)
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, "", fmt.Errorf("demo key file: %w", err)
		}
	}
	return func(name string) string {
		if name == "RUNSDESK_KEYS_FILE" {
			return path
		}
		return getenv(name)
	}, path, nil
}
