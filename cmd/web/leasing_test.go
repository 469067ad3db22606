package main

import (
	"strings"
	"testing"
	"time"

	"runsdesk/handlers"
	"runsdesk/runtime/auditchain"
	"runsdesk/runtime/retention"
)

func TestLeasingSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  environ
		args []string
		want string
	}{
		{"serve zero lease", nil, []string{"serve", "--lease", "0s"}, "--lease must be at least 1s"},
		{"serve lease below a second", nil, []string{"serve", "--lease", "500ms"}, "--lease must be at least 1s"},
		{"serve lease from env", environ{"RUNSDESK_LEASE": "long"}, []string{"serve"}, `environment variable RUNSDESK_LEASE: "long" is not a duration`},
		{"serve zero reap interval", nil, []string{"serve", "--reap-interval", "0s"}, "--reap-interval must be positive"},
		{"serve zero request timeout", nil, []string{"serve", "--request-timeout", "0s"}, "--request-timeout must be positive"},
		{"serve negative max in flight", nil, []string{"serve", "--max-in-flight=-1"}, "--max-in-flight must not be negative"},
		{"serve max in flight from env", environ{"RUNSDESK_MAX_IN_FLIGHT": "many"}, []string{"serve"}, "RUNSDESK_MAX_IN_FLIGHT"},
		{"worker negative poll interval", nil, []string{"worker", "--poll-interval=-1s"}, "--poll-interval must be positive"},
		{"worker reap interval from env", environ{"RUNSDESK_REAP_INTERVAL": "often"}, []string{"worker"}, "RUNSDESK_REAP_INTERVAL"},
		{"serve zero retention interval", nil, []string{"serve", "--retention-interval", "0s"}, "--retention-interval must be positive"},
		{"worker retention interval from env", environ{"RUNSDESK_RETENTION_INTERVAL": "hourly"}, []string{"worker"}, "RUNSDESK_RETENTION_INTERVAL"},
		{"serve audit lag below a second", nil, []string{"serve", "--audit-lag", "500ms"}, "--audit-lag must be at least 1s"},
		{"worker zero checkpoint interval", nil, []string{"worker", "--checkpoint-interval", "0s"}, "--checkpoint-interval must be positive"},
		{"serve checkpoint interval from env", environ{"RUNSDESK_CHECKPOINT_INTERVAL": "hourly"}, []string{"serve"}, "RUNSDESK_CHECKPOINT_INTERVAL"},
		{"audit verify from zero", nil, []string{"audit", "verify", "--from", "0"}, "--from must be at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, c.env, nil, c.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", r.code, r.stderr, exitUsage, c.want)
			}
		})
	}
}

func TestLeasingDefaults(t *testing.T) {
	t.Parallel()
	want := map[string]time.Duration{"lease": 15 * time.Minute, "reap-interval": 30 * time.Second, "poll-interval": time.Second,
		"retention-interval": retention.DefaultInterval, "audit-lag": auditchain.DefaultLag, "checkpoint-interval": auditchain.DefaultCheckpointInterval}
	for _, s := range settings() {
		d, ok := want[s.Flag]
		if !ok {
			continue
		}
		got, err := time.ParseDuration(s.Default)
		if err != nil || got != d {
			t.Errorf("--%s default %q, want %s", s.Flag, s.Default, d)
		}
		delete(want, s.Flag)
	}
	if len(want) > 0 {
		t.Errorf("settings lack %v", want)
	}
}

// TestSessionLimits: --session-idle and --session-max (and their environment twins) may only
// shorten the desk's session timeouts; their defaults are those timeouts.
func TestSessionLimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  environ
		args []string
		want string
	}{
		{"idle above 30m", nil, []string{"serve", "--session-idle", "31m"}, "--session-idle must be between 1m and 30m (it may only shorten the default), got 31m"},
		{"idle from env above 30m", environ{"RUNSDESK_SESSION_IDLE": "1h"}, []string{"serve"}, "--session-idle must be between 1m and 30m (it may only shorten the default), got 1h"},
		{"idle below a minute", nil, []string{"serve", "--session-idle", "30s"}, "--session-idle must be between 1m and 30m"},
		{"max above 12h", nil, []string{"serve", "--session-max", "24h"}, "--session-max must be between 1m and 12h (it may only shorten the default), got 24h"},
		{"max from env above 12h", environ{"RUNSDESK_SESSION_MAX": "13h"}, []string{"serve"}, "--session-max must be between 1m and 12h"},
		{"max not a duration", environ{"RUNSDESK_SESSION_MAX": "a day"}, []string{"serve"}, `environment variable RUNSDESK_SESSION_MAX: "a day" is not a duration`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, c.env, nil, c.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", r.code, r.stderr, exitUsage, c.want)
			}
		})
	}
	if err := (sessionLimits{Idle: 5 * time.Minute, Max: 8 * time.Hour}).check(); err != nil {
		t.Errorf("shorter limits refused: %v", err)
	}
	want := map[string]time.Duration{"session-idle": handlers.DefaultIdleTimeout, "session-max": handlers.DefaultLifetime}
	for _, s := range settings() {
		if d, ok := want[s.Flag]; ok {
			if got, err := time.ParseDuration(s.Default); err != nil || got != d {
				t.Errorf("--%s default %q, want %s", s.Flag, s.Default, d)
			}
			delete(want, s.Flag)
		}
	}
	if len(want) > 0 {
		t.Errorf("settings lack %v", want)
	}
}
