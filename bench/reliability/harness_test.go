package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runsdesk/db/dbtest"
	"runsdesk/internal/syncbuf"
)

func TestMain(m *testing.M) {
	dbtest.Main(m, func() {
		if err := galeraCluster.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "galera: %v\n", err)
		}
	})
}

// longEnv names the variable that enables the long tests (TestDatabaseOutageUnderLoad's
// 10 s outages, down and hung).
const longEnv = "RUNSDESK_LONG"

// buildBinary builds runsdesk (cmd/web) with the build tags into a temporary directory.
func buildBinary(t *testing.T, tags string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the runsdesk binary")
	}
	bin := filepath.Join(t.TempDir(), "runsdesk")
	args := []string{"build", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	out, err := exec.Command("go", append(args, "runsdesk/cmd/web")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer collects what a test's logger or server writes while the test reads it.
type syncBuffer = syncbuf.Buffer

// cliResult is how a finished command ended.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs bin with args to completion (at most two minutes) in env.
func runCLI(t *testing.T, bin string, env []string, stdin string, args ...string) cliResult {
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
	res := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("runsdesk %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// eventually calls f every interval until it returns true or the bound passes; it reports
// whether f succeeded. The bound only keeps a broken system from hanging the test.
func eventually(bound, interval time.Duration, f func() bool) bool {
	deadline := time.Now().Add(bound)
	for {
		if f() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}
