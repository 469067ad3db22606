// Package phptest runs PHP for tests that check runsdesk against what TYPO3's PHP writes. Where
// php is missing such a test skips, unless the environment sets CI or RUNSDESK_REQUIRE_PHP,
// which turns the skip into a failure (.ci/run installs php-cli and sets it).
package phptest

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Path returns the php binary on PATH, or skips tb when there is none (fails it when CI or
// RUNSDESK_REQUIRE_PHP is set).
func Path(tb testing.TB) string {
	tb.Helper()
	php, err := exec.LookPath("php")
	if err == nil {
		return php
	}
	if os.Getenv("CI") != "" || os.Getenv("RUNSDESK_REQUIRE_PHP") != "" {
		tb.Fatal("php is required here (CI or RUNSDESK_REQUIRE_PHP is set) but missing (apt-get install -y php-cli)")
	}
	tb.Skip("skipped: php is missing (apt-get install -y php-cli); set RUNSDESK_REQUIRE_PHP=1 to make this a failure")
	return ""
}

// Run runs program with `php -r`, stdin on its standard input, and returns what it printed;
// it skips tb as Path does and fails it when php exits with an error.
func Run(tb testing.TB, program, stdin string) string {
	tb.Helper()
	cmd := exec.Command(Path(tb), "-r", program)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("php: %v: %s", err, stderr.String())
	}
	return string(out)
}
