package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runsdesk/db/dbtest"
)

// TestBinaryEndToEnd builds the runsdesk binary and drives migrate, user add, token create and
// apply against a test database, as an operator would.
func TestBinaryEndToEnd(t *testing.T) {
	t.Parallel()
	bin, dir := buildBinary(t)
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"RUNSDESK_DSN=" + dbtest.NewDatabase(t), "RUNSDESK_LOG_LEVEL=warn",
		"OPENAI_API_KEY=sk-test", "REFUND_TOKEN=rt-test",
	}
	runBin := func(stdin string, args ...string) result { return runBinary(t, bin, env, stdin, args...) }

	steps := []struct {
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"", []string{"user", "add", "--username", "admin", "--role", "admin"}, 1, "", "run `runsdesk migrate` first"},
		{"", []string{"migrate"}, 0, "Database migrated: ", ""},
		{"", []string{"migrate"}, 0, "0 migration(s) applied", ""},
		{"", []string{"user", "add", "--username", "admin", "--role", "admin"}, 0, "", `User "admin" created (role admin`},
		{"", []string{"user", "add", "--username", "admin", "--role", "admin"}, 1, "", "already taken"},
		{"violet otters juggle 42 teacups\n", []string{"user", "add", "--username", "rita", "--role", "reviewer"}, 0, "", `User "rita" created (role reviewer`},
		{"", []string{"user", "add", "--username", "sam", "--role", "owner"}, 2, "", "--role: the role must be admin, reviewer or support"},
		{"", []string{"token", "create", "--name", "ci", "--scopes", "run,read"}, 0, "rdsk_", `Service account "ci" created (scopes run, read; it does not expire)`},
		{"", []string{"token", "create", "--name", "ci2"}, 2, "", "--scopes: at least one scope is required"},
		{"", []string{"apply", "-f", "../../runtime/apply/testdata/valid.yaml", "--dry-run"}, 0, "Dry run: 5 to create, 0 to update, 0 unchanged; nothing was written.", ""},
		{"", []string{"apply", "-f", "../../runtime/apply/testdata/valid.yaml"}, 0, "Applied: 5 created, 0 updated, 0 unchanged.", ""},
		{"", []string{"apply", "-f", "../../runtime/apply/testdata/valid.yaml"}, 0, "Applied: 0 created, 0 updated, 5 unchanged.", ""},
		{"", []string{"apply", "-f", "../../runtime/apply/testdata/five-mistakes.yaml"}, 1, "", "4 problems; nothing was applied:"}, // REFUND_TOKEN is set here,
		{"", []string{"apply"}, 2, "", "-f FILE is required"},
		{"", []string{"reap"}, 0, "Reaped 0 stale run(s)", ""},
		{"", []string{"cancel", "6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10"}, 1, "", "unknown or already finished"},
		{"", []string{"cancel"}, 2, "", "the run's uuid is required"},
		{"", []string{"launch"}, 2, "", `unknown command "launch"`},
	}
	var password string
	for _, s := range steps {
		r := runBin(s.stdin, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout, s.stdout) || !strings.Contains(r.stderr, s.stderr) {
			t.Errorf("runsdesk %s: exit %d (want %d)\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), r.code, s.code, r.stdout, r.stderr)
		}
		if strings.Join(s.args, " ") == "user add --username admin --role admin" && r.code == 0 {
			password = strings.TrimSpace(r.stdout)
		}
	}
	if len(password) < 30 {
		t.Fatalf("no generated password on stdout: %q", password)
	}
	e := environ{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	authenticate(t, e, "admin", password)
	authenticate(t, e, "rita", "violet otters juggle 42 teacups")
}

// buildBinary builds runsdesk into a temporary directory and returns its path and the
// directory.
func buildBinary(t *testing.T) (bin, dir string) {
	t.Helper()
	return buildBinaryWith(t, nil)
}

// buildBinaryWith is buildBinary with env added to the build's environment (CGO_ENABLED=0)
// and flags given to go build (-trimpath).
func buildBinaryWith(t *testing.T, env []string, flags ...string) (bin, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "runsdesk")
	build := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, ".")...)
	build.Env = append(os.Environ(), env...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, dir
}

// runBinary runs the built binary to completion with env and stdin ("" = nothing piped).
func runBinary(t *testing.T, bin string, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}
