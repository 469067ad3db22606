package main

import (
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestServeLogsTextOnATerminalAndJSONElsewhere: serve logs as text without access lines when
// standard error is a terminal and as JSON with one line per request elsewhere; --log-format,
// --access-log and their environment twins override either, the flag before the variable.
// Without access lines errors are still rendered.
func TestServeLogsTextOnATerminalAndJSONElsewhere(t *testing.T) {
	t.Parallel()
	base := newDatabase(t)
	base["RUNSDESK_LOG_LEVEL"] = "info"
	base["RUNSDESK_ADDR"] = "127.0.0.1:0"
	for _, c := range []struct {
		name       string
		terminal   bool
		env        environ
		args       []string
		text, each bool
	}{
		{name: "terminal", terminal: true, text: true},
		{name: "not a terminal", each: true},
		{name: "terminal --log-format json", terminal: true, args: []string{"--log-format", "json"}, each: true},
		{name: "terminal bare --access-log", terminal: true, args: []string{"--access-log"}, text: true, each: true},
		{name: "RUNSDESK_LOG_FORMAT=text", env: environ{"RUNSDESK_LOG_FORMAT": "text"}, text: true},
		{name: "RUNSDESK_ACCESS_LOG=false", env: environ{"RUNSDESK_ACCESS_LOG": "false"}},
		{name: "RUNSDESK_ACCESS_LOG=true on a terminal", terminal: true, env: environ{"RUNSDESK_ACCESS_LOG": "true"}, text: true, each: true},
		{name: "--access-log=false over RUNSDESK_ACCESS_LOG=true", env: environ{"RUNSDESK_ACCESS_LOG": "true"}, args: []string{"--access-log=false"}},
		{name: "--log-format json over RUNSDESK_LOG_FORMAT=text", env: environ{"RUNSDESK_LOG_FORMAT": "text"}, args: []string{"--log-format=json"}, each: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := maps.Clone(base)
			maps.Copy(env, c.env)
			s := startOn(t, c.terminal, env, append([]string{"serve", "--workers", "1"}, c.args...)...)
			url := s.waitFor(t, urlLine)
			if code, _ := get(t, url+"healthz"); code != 200 {
				t.Fatalf("GET /healthz = %d", code)
			}
			if code, body := get(t, url+"no-such-page"); code != 404 || !strings.Contains(body, "<html") {
				t.Fatalf("GET /no-such-page = %d %.80q: errors are rendered with or without access lines", code, body)
			}
			if code := s.stop(t); code != exitOK {
				t.Fatalf("serve exited %d:\n%s", code, s.stderr)
			}
			logs := s.stderr.String()
			serving, request := `"msg":"serving"`, `"msg":"request"`
			if c.text {
				serving, request = "level=INFO msg=serving url=", "level=INFO msg=request"
			}
			if !strings.Contains(logs, serving) || strings.Contains(logs, `{"time":`) == c.text {
				t.Errorf("want text logs %v, got:\n%s", c.text, logs)
			}
			if strings.Contains(logs, request) != c.each || c.each && !strings.Contains(logs, "/healthz") {
				t.Errorf("want access lines %v, got:\n%s", c.each, logs)
			}
		})
	}
}

// TestLogSettingsThatDoNotParseAreUsageErrors: a --log-format or --access-log value, or its
// variable's, that is not one of the choices stops the command with exit 2, naming it.
func TestLogSettingsThatDoNotParseAreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  environ
		args []string
		want string
	}{
		{nil, []string{"user", "list", "--log-format", "xml"}, `invalid value "xml" for flag -log-format: want auto, text or json`},
		{environ{"RUNSDESK_LOG_FORMAT": "pretty"}, []string{"migrate"}, `environment variable RUNSDESK_LOG_FORMAT: "pretty": want auto, text or json`},
		{nil, []string{"serve", "--access-log=maybe"}, `"maybe" is not true, false or auto`},
		{environ{"RUNSDESK_ACCESS_LOG": "sometimes"}, []string{"serve"}, `environment variable RUNSDESK_ACCESS_LOG: "sometimes" is not true, false or auto`},
	} {
		if r := cliRun(t, c.env, nil, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and %q", c.env, c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestDemoBannerIsOneWrite: the demo desk's banner reaches standard output in one write, so a
// log line on the same terminal cannot land inside it.
func TestDemoBannerIsOneWrite(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	env["RUNSDESK_ADDR"] = "127.0.0.1:0"
	s := startOn(t, true, env, "serve", "--demo", "--workers", "1")
	s.waitFor(t, regexp.MustCompile(`(The data stays in)`))
	if n := s.stdout.Writes(); n != 1 || !strings.Contains(s.stdout.String(), "password: ") {
		t.Errorf("%d writes to stdout, want 1:\n%s", n, s.stdout)
	}
}

// TestAddressInUseNamesTheFlagAndTheHolder: serve on a port another process listens on fails
// naming --addr and RUNSDESK_ADDR and, on Linux, the process holding it (here the test).
func TestAddressInUseNamesTheFlagAndTheHolder(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := cliRun(t, environ{"RUNSDESK_DATA_DIR": t.TempDir()}, nil, "serve", "--addr", ln.Addr().String())
	if r.code != exitFailure || !strings.Contains(r.stderr, "address already in use") ||
		!strings.Contains(r.stderr, "choose another address with --addr or RUNSDESK_ADDR") {
		t.Fatalf("serve on a port in use: %+v", r)
	}
	if runtime.GOOS != "linux" {
		return
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("(held by %s, pid %d)", strings.TrimSpace(string(comm)), os.Getpid()); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not name the holder %s", r.stderr, want)
	}
}

// TestIsTerminal: a pipe, a regular file, the null device and a buffer are not terminals.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]io.Writer{"pipe": w, "null device": null, "file": file, "buffer": &syncBuffer{}} {
		if isTerminal(w) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
}
