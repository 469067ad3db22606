package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/db/dbtest"
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

// syncBuffer is a bytes.Buffer safe to write from the command and read from the test.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

// Writes is how many writes the buffer took.
func (s *syncBuffer) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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

// newDatabase returns an environment naming a fresh, migrated test database.
func newDatabase(t *testing.T) environ {
	t.Helper()
	env := environ{"RUNSDESK_DSN": dbtest.NewDatabase(t), "RUNSDESK_LOG_LEVEL": "warn"}
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
