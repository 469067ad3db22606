package main

import (
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  environ
		args []string
		want string
	}{
		{"no command", nil, nil, "Usage: runsdesk <command>"},
		{"unknown command", nil, []string{"launch"}, `unknown command "launch"`},
		{"user without subcommand", nil, []string{"user"}, "runsdesk user: unknown or missing subcommand; one of:\n  user add "},
		{"token with a wrong subcommand", nil, []string{"token", "delete"}, "  token rotate "},
		{"unknown flag", nil, []string{"migrate", "--colour"}, "flag provided but not defined: -colour"},
		{"bad log level", nil, []string{"migrate", "--log-level", "loud"}, "--log-level: want debug, info, warn or error"},
		{"serve extra argument", nil, []string{"serve", "now"}, `unexpected argument "now"`},
		{"serve no workers", nil, []string{"serve", "--workers", "0"}, "--workers must be at least 1"},
		{"serve workers from env", environ{"RUNSDESK_WORKERS": "many"}, []string{"serve"}, `environment variable RUNSDESK_WORKERS: "many" is not a whole number`},
		{"serve secure cookies", nil, []string{"serve", "--secure-cookies", "maybe"}, `--secure-cookies: "maybe" is not true, false or auto`},
		{"serve shutdown timeout from env", environ{"RUNSDESK_SHUTDOWN_TIMEOUT": "soon"}, []string{"serve"}, "RUNSDESK_SHUTDOWN_TIMEOUT"},
		{"serve demo from env", environ{"RUNSDESK_DEMO": "sure"}, []string{"serve"}, `environment variable RUNSDESK_DEMO: "sure" is not true or false`},
		{"worker negative workers", nil, []string{"worker", "--workers=-1"}, "--workers must be at least 1"},
		{"worker extra argument", nil, []string{"worker", "x"}, `unexpected argument "x"`},
		{"migrate extra argument", nil, []string{"migrate", "up"}, `unexpected argument "up"`},
		{"user add without username", nil, []string{"user", "add", "--role", "admin"}, "--username is required"},
		{"user add without role", nil, []string{"user", "add", "--username", "u"}, `--role: the role must be admin, reviewer or support, got ""`},
		{"user add with a bad role", nil, []string{"user", "add", "--username", "u", "--role", "boss"}, `got "boss"`},
		{"token create without name", nil, []string{"token", "create", "--scopes", "read"}, "--name is required"},
		{"token create without scopes", nil, []string{"token", "create", "--name", "ci"}, "--scopes: at least one scope is required"},
		{"token create with a bad scope", nil, []string{"token", "create", "--name", "ci", "--scopes", "read,admin"}, `unknown scope "admin"`},
		{"apply without file", nil, []string{"apply"}, "-f FILE is required"},
		{"apply extra argument", nil, []string{"apply", "-f", "x.yaml", "y.yaml"}, `unexpected argument "y.yaml"`},
		{"reap zero limit", nil, []string{"reap", "--limit", "0"}, "--limit must be at least 1, got 0"},
		{"reap limit from env", environ{"RUNSDESK_REAP_LIMIT": "x"}, []string{"reap"}, "RUNSDESK_REAP_LIMIT"},
		{"cancel without uuid", nil, []string{"cancel"}, "the run's uuid is required"},
		{"cancel two uuids", nil, []string{"cancel", "a", "b"}, "one uuid only"},
		{"cancel not a uuid", nil, []string{"cancel", "run-1"}, `"run-1" is not a run uuid`},
		{"user list extra argument", nil, []string{"user", "list", "ann"}, `unexpected argument "ann"`},
		{"user disable without username", nil, []string{"user", "disable"}, "USERNAME is required: runsdesk user disable USERNAME"},
		{"user enable two usernames", nil, []string{"user", "enable", "ann", "bob"}, `unexpected argument "bob"`},
		{"user role without role", nil, []string{"user", "role", "ann"}, "ROLE is required: runsdesk user role USERNAME ROLE"},
		{"user role with a bad role", nil, []string{"user", "role", "ann", "boss"}, `the role must be admin, reviewer or support, got "boss"`},
		{"user role with the service role", nil, []string{"user", "role", "ann", "service"}, `got "service"`},
		{"user reset-password without username", nil, []string{"user", "reset-password"}, "USERNAME is required"},
		{"user end-sessions unknown flag", nil, []string{"user", "end-sessions", "ann", "--all"}, "flag provided but not defined: -all"},
		{"token list extra argument", nil, []string{"token", "list", "ci"}, `unexpected argument "ci"`},
		{"token revoke without name", nil, []string{"token", "revoke"}, "NAME is required: runsdesk token revoke NAME"},
		{"token rotate two names", nil, []string{"token", "rotate", "a", "b"}, `unexpected argument "b"`},
		{"token rotate bad log level after the name", nil, []string{"token", "rotate", "ci", "--log-level", "loud"}, "--log-level: want debug"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, c.env, nil, c.args...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, exitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", r.stderr, c.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty:\n%s", r.stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	r := cliRun(t, nil, nil, "help")
	if r.code != exitOK || !strings.Contains(r.stdout, "token create") || !strings.Contains(r.stdout, "cancel") {
		t.Errorf("help: %+v", r)
	}
	for _, args := range [][]string{
		{"serve", "--help"}, {"worker", "-h"}, {"migrate", "--help"}, {"user", "add", "--help"},
		{"token", "create", "--help"}, {"apply", "--help"}, {"reap", "--help"}, {"cancel", "--help"},
		{"user", "list", "--help"}, {"user", "disable", "-h"}, {"user", "enable", "--help"}, {"user", "role", "--help"},
		{"user", "reset-password", "--help"}, {"user", "end-sessions", "--help"}, {"token", "list", "--help"},
		{"token", "revoke", "--help"}, {"token", "rotate", "ci", "--help"},
	} {
		name := strings.Join(args[:2], " ")
		if len(args) == 2 {
			name = args[0]
		}
		r := cliRun(t, nil, nil, args...)
		if r.code != exitOK || !strings.HasPrefix(r.stdout, "Usage: runsdesk "+name) || !strings.Contains(r.stdout, "RUNSDESK_DSN") {
			t.Errorf("%s --help: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
		}
	}
	for _, family := range []string{"user", "token"} {
		r := cliRun(t, nil, nil, family, "--help")
		if r.code != exitOK || !strings.Contains(r.stdout, family+" list") || !strings.Contains(r.stdout, family+" create") && !strings.Contains(r.stdout, family+" add") {
			t.Errorf("%s --help: exit %d\n%s%s", family, r.code, r.stdout, r.stderr)
		}
	}
	r = cliRun(t, nil, nil, "user", "role", "--help")
	if !strings.HasPrefix(r.stdout, "Usage: runsdesk user role USERNAME ROLE [flags]") {
		t.Errorf("user role --help:\n%s", r.stdout)
	}
	r = cliRun(t, nil, nil, "serve", "--help")
	for _, env := range []string{"RUNSDESK_ADDR", "RUNSDESK_DATA_DIR", "RUNSDESK_WORKERS", "RUNSDESK_SECURE_COOKIES", "RUNSDESK_NO_MIGRATE", "RUNSDESK_DEMO"} {
		if !strings.Contains(r.stdout, env) {
			t.Errorf("serve --help does not name %s", env)
		}
	}
}

func TestSettingsTableNamesEveryFlagOnce(t *testing.T) {
	t.Parallel()
	flags, envs := map[string]bool{}, map[string]bool{}
	for _, s := range settings() {
		if flags[s.Flag] || envs[s.Env] || !strings.HasPrefix(s.Env, "RUNSDESK_") || s.Usage == "" {
			t.Errorf("setting %+v repeats a name or lacks its environment twin or usage", s)
		}
		flags[s.Flag], envs[s.Env] = true, true
	}
}

func TestSecureCookies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode, addr string
		want       bool
	}{
		{"auto", "127.0.0.1:8080", false},
		{"auto", "[::1]:8080", false},
		{"auto", "localhost:8080", false},
		{"auto", ":8080", true},
		{"auto", "0.0.0.0:8080", true},
		{"auto", "desk.example.com:443", true},
		{"true", "127.0.0.1:8080", true},
		{"false", "0.0.0.0:8080", false},
	}
	for _, c := range cases {
		got, err := secureCookies(c.mode, c.addr)
		if err != nil || got != c.want {
			t.Errorf("secureCookies(%q, %q) = %v, %v; want %v", c.mode, c.addr, got, err, c.want)
		}
	}
}

// TestHelpWritesFlagsAsTheyAreTyped: a command's help lists long flags as --name (as the
// README does) and one-letter ones as -f, with their environment twin and default.
func TestHelpWritesFlagsAsTheyAreTyped(t *testing.T) {
	t.Parallel()
	r := cliRun(t, nil, nil, "apply", "--help")
	for _, want := range []string{"\n  --dry-run\n", "\n  -f string\n", "\n  --file string\n",
		"\n  --data-dir string\n    \tdirectory for local data (the private database server's files) (env RUNSDESK_DATA_DIR) (default \"./var\")\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("apply --help lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\n  -dry-run") || strings.Contains(r.stdout, "\n  -file") {
		t.Errorf("apply --help writes a long flag with one dash:\n%s", r.stdout)
	}
	if r := cliRun(t, nil, nil, "audit", "list", "--help"); !strings.Contains(r.stdout, "\n  --format table|json|csv|jsonl\n") ||
		!strings.Contains(r.stdout, "\n  --log-format auto|text|json\n") || !strings.Contains(r.stdout, "(env RUNSDESK_FORMAT) (default table)\n") {
		t.Errorf("audit list --help:\n%s", r.stdout)
	}
	if r := cliRun(t, nil, nil, "serve", "--help"); !strings.Contains(r.stdout, "\n  --workers int\n") || !strings.Contains(r.stdout, "(default 30s)") {
		t.Errorf("serve --help:\n%s", r.stdout)
	}
}

// TestVersion: `runsdesk version` prints the module version, commit, build time and Go
// version, "unknown" for what the build did not record.
func TestVersion(t *testing.T) {
	t.Parallel()
	r := cliRun(t, nil, nil, "version")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != exitOK || len(lines) != 4 || !strings.HasPrefix(lines[0], "runsdesk ") || !strings.HasPrefix(lines[1], "commit  ") ||
		!strings.HasPrefix(lines[2], "built   ") || lines[3] != "go      "+goruntime.Version() {
		t.Fatalf("version: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "runsdesk", Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1e7716c0"}, {Key: "vcs.time", Value: "2026-12-01T21:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := buildVersion(info), (version{"v1.2.3", "1e7716c0 (modified)", "2026-12-01T21:00:00Z", "go1.99"}); got != want {
		t.Fatalf("buildVersion = %+v, want %+v", got, want)
	}
	if got := buildVersion(&debug.BuildInfo{}); got != (version{"unknown", "unknown", "unknown", "unknown"}) {
		t.Fatalf("buildVersion of nothing = %+v", got)
	}
	if r := cliRun(t, nil, nil, "version", "now"); r.code != exitUsage {
		t.Fatalf("version now: %+v", r)
	}
}
