package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/internal/syncbuf"
)

// TestMain runs the tests, or, when the environment names execMainEnv, is the runsdesk
// command itself (main), so a test can signal a real process.
func TestMain(m *testing.M) {
	if os.Getenv(execMainEnv) != "" {
		main()
		return
	}
	dbtest.Main(m)
}

// result is what one in-process run of the CLI did.
type result struct {
	code   int
	stdout string
	stderr string
}

// syncBuffer collects what a test's logger or server writes while the test reads it.
type syncBuffer = syncbuf.Buffer

// environ is a fake environment.
type environ map[string]string

func (e environ) get(name string) string { return e[name] }

// cliRun runs the CLI in-process with stdin (nil: nothing piped) and env.
func cliRun(t *testing.T, env environ, stdin io.Reader, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr syncBuffer
	code := run(ctx, args, stdin, &stdout, &stderr, env.get)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// newDatabase returns an environment naming a fresh, migrated test database and a temporary
// data directory (where serve --demo keeps its key file).
func newDatabase(t *testing.T) environ {
	t.Helper()
	env := environ{"RUNSDESK_DSN": dbtest.NewDatabase(t), "RUNSDESK_LOG_LEVEL": "warn", "RUNSDESK_DATA_DIR": t.TempDir()}
	if r := cliRun(t, env, nil, "migrate"); r.code != exitOK {
		t.Fatalf("migrate: %+v", r)
	}
	return env
}

// store opens the test database behind env.
func store(t *testing.T, env environ) *conn {
	t.Helper()
	pool, err := db.Open(context.Background(), env["RUNSDESK_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return &conn{pool: pool, dsn: env["RUNSDESK_DSN"]}
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
