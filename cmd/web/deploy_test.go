package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"runsdesk/db/dbtest"
)

const (
	systemdUnit   = "../../deploy/runsdesk.service"
	containerfile = "../../deploy/Containerfile"
	// installedBinary is where the unit runs runsdesk from.
	installedBinary = "/usr/local/bin/runsdesk"
)

// TestStaticBinaryServes builds runsdesk as the Containerfile does (CGO_ENABLED=0, -trimpath):
// it links no shared library, migrates the test database, serves on a free loopback port until /readyz answers
// 200, and its healthcheck exits 0 while it serves (asked on the listen address or a wildcard one) and
// 1 once it stopped.
func TestStaticBinaryServes(t *testing.T) {
	t.Parallel()
	bin, dir := buildBinaryWith(t, []string{"CGO_ENABLED=0"}, "-trimpath")
	exe, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := exe.ImportedLibraries()
	if interp := exe.Section(".interp"); err != nil || len(libs) > 0 || interp != nil {
		t.Fatalf("the CGO_ENABLED=0 binary is not static: libraries %v (%v), interpreter section %v", libs, err, interp != nil)
	}
	exe.Close()

	env := environ{"RUNSDESK_DSN": dbtest.NewDatabase(t), "RUNSDESK_LOG_LEVEL": "warn", "RUNSDESK_DATA_DIR": dir, "HOME": dir}
	environment := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		environment = append(environment, k+"="+v)
	}
	if r := runBinary(t, bin, environment, "", "migrate"); r.code != exitOK {
		t.Fatalf("migrate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	p := startProcess(t, exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--no-migrate"), env)
	banner := regexp.MustCompile(`runsdesk is serving on (http://\S+)`)
	p.waitForOutput(t, banner, time.Minute)
	base, err := url.Parse(banner.FindStringSubmatch(p.output.String())[1])
	if err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, "http://"+base.Host)

	_, port, _ := net.SplitHostPort(base.Host)
	for _, args := range [][]string{{"healthcheck"}, {"healthcheck", "--addr", "0.0.0.0:" + port}} {
		r := runBinary(t, bin, append(environment, "RUNSDESK_ADDR="+base.Host), "", args...)
		if r.code != exitOK || !strings.Contains(r.stdout, "answered 200") {
			t.Errorf("%v while serving: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if code := p.signalGroup(t, syscall.SIGTERM); code != exitOK {
		t.Errorf("serve exited %d after SIGTERM:\n%s", code, p.output)
	}
	if r := runBinary(t, bin, append(environment, "RUNSDESK_ADDR="+base.Host), "", "healthcheck"); r.code != exitFailure || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("healthcheck after serve stopped: exit %d, want 1 with one line\n%s", r.code, r.stderr)
	}
}

// TestSystemdUnitVerifies: deploy/runsdesk.service runs commands runsdesk has, as a dedicated
// user with its settings from an EnvironmentFile and the hardening options, and
// `systemd-analyze verify` finds nothing to say about it (run where systemd-analyze exists,
// with the binary's path pointed at an executable that does).
func TestSystemdUnitVerifies(t *testing.T) {
	t.Parallel()
	unit := readTestFile(t, systemdUnit)
	for _, want := range []string{"\nUser=runsdesk\n", "\nEnvironmentFile=", "\nProtectSystem=strict\n", "\nNoNewPrivileges=yes\n",
		"\nExecStart=" + installedBinary + " serve"} {
		if !strings.Contains(unit, want) {
			t.Errorf("%s lacks %q", systemdUnit, strings.TrimSpace(want))
		}
	}
	for _, line := range regexp.MustCompile(`(?m)^Exec\w+=`+regexp.QuoteMeta(installedBinary)+` (.+)$`).FindAllStringSubmatch(unit, -1) {
		checkCommand(t, systemdUnit, strings.Fields(line[1]))
	}

	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit's syntax is not verified")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "runsdesk.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, installedBinary, self)), 0o600); err != nil {
		t.Fatal(err)
	}
	// verify exits 0 after warnings (an unknown key, a value it ignores): any output fails.
	out, err := exec.Command(tool, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", systemdUnit, err, out)
	}
}

// TestContainerfileRunsItsBinary: deploy/Containerfile builds without cgo, copies the binary
// to the path its HEALTHCHECK and ENTRYPOINT run, runs healthcheck and serve (commands
// runsdesk has) as a non-root user, and exposes the port of the address it sets.
func TestContainerfileRunsItsBinary(t *testing.T) {
	t.Parallel()
	file := readTestFile(t, containerfile)
	directive := func(name string) string {
		m := regexp.MustCompile(`(?m)^`+name+`\s+((?:.*\\\n)*.*)$`).FindAllStringSubmatch(file, -1)
		if len(m) == 0 {
			t.Fatalf("%s has no %s", containerfile, name)
		}
		return strings.ReplaceAll(m[len(m)-1][1], "\\\n", " ")
	}
	execForm := func(name, s string) []string {
		var words []string
		if err := json.Unmarshal([]byte(s), &words); err != nil || len(words) == 0 {
			t.Fatalf("%s: %s %s is not in exec form: %v", containerfile, name, s, err)
		}
		return words
	}
	if run := directive("RUN"); !strings.Contains(run, "CGO_ENABLED=0 go build -trimpath") || !strings.HasSuffix(run, " ./cmd/web") {
		t.Errorf("%s builds with %q, want CGO_ENABLED=0 go build -trimpath … ./cmd/web", containerfile, run)
	}
	copied := strings.Fields(directive("COPY"))
	binary := copied[len(copied)-1]
	_, health, _ := strings.Cut(directive("HEALTHCHECK"), "CMD ")
	entry := execForm("ENTRYPOINT", directive("ENTRYPOINT"))
	for name, words := range map[string][]string{"HEALTHCHECK": execForm("HEALTHCHECK", health), "ENTRYPOINT and CMD": append(entry, execForm("CMD", directive("CMD"))...)} {
		if words[0] != binary {
			t.Errorf("%s: %s runs %s, but the binary is copied to %s", containerfile, name, words[0], binary)
		}
		checkCommand(t, containerfile, words[1:])
	}
	if user := directive("USER"); user == "root" || user == "0" || strings.HasPrefix(user, "0:") {
		t.Errorf("%s runs as %s, want a non-root user", containerfile, user)
	}
	addr := regexp.MustCompile(`RUNSDESK_ADDR=\S+:(\d+)`).FindStringSubmatch(file)
	if addr == nil || directive("EXPOSE") != addr[1] {
		t.Errorf("%s: EXPOSE %s, RUNSDESK_ADDR %v: want the port it listens on exposed", containerfile, directive("EXPOSE"), addr)
	}
}

// checkCommand fails the test unless args (a command line after the binary's path, in file)
// name a runsdesk command: its --help answers with its usage.
func checkCommand(t *testing.T, file string, args []string) {
	t.Helper()
	r := cliRun(t, nil, nil, append(args, "--help")...)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "Usage: runsdesk "+args[0]) {
		t.Errorf("%s runs `runsdesk %s`, which is not a runsdesk command: exit %d\n%s", file, strings.Join(args, " "), r.code, r.stderr)
	}
}
