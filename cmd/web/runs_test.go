package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"runsdesk/db"
	"runsdesk/runtime"
)

// newRun stores a run: running under a lease that lapsed a minute ago when stale, else queued.
func newRun(t *testing.T, env environ, stale bool) string {
	t.Helper()
	now := time.Now().Unix()
	in := runtime.NewRun{UUID: uuid.NewString(), ConfigurationUID: 1, ConfigurationIdentifier: "c", QueuedRequest: `{"kind":"start","prompt":"hi"}`, Now: now - 120}
	if stale {
		in.Lease = runtime.Lease{Owner: "worker:gone:1:abcd", Expires: now - 60, Now: now - 120}
	}
	if _, err := db.New(store(t, env).pool).CreateRun(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	return in.UUID
}

func runStatus(t *testing.T, env environ, id string) runtime.Status {
	t.Helper()
	r, err := db.New(store(t, env).pool).FindByUUID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

func TestReap(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	r := cliRun(t, env, nil, "reap")
	if r.code != exitOK || r.stdout != "Reaped 0 stale run(s): 0 requeued, 0 dead-lettered, 0 skipped\n" {
		t.Errorf("reap of nothing: %+v", r)
	}
	stale := newRun(t, env, true)
	queued := newRun(t, env, false)
	r = cliRun(t, env, nil, "reap", "--limit", "10")
	if r.code != exitOK || r.stdout != "Reaped 1 stale run(s): 1 requeued, 0 dead-lettered, 0 skipped\n" {
		t.Errorf("reap: %+v", r)
	}
	if s := runStatus(t, env, stale); s != runtime.StatusQueued {
		t.Errorf("stale run is %s, want queued", s)
	}
	if s := runStatus(t, env, queued); s != runtime.StatusQueued {
		t.Errorf("queued run is %s", s)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	id := newRun(t, env, false)
	r := cliRun(t, env, nil, "cancel", id)
	if r.code != exitOK || r.stdout != "Run "+id+" cancelled.\n" {
		t.Errorf("cancel: %+v", r)
	}
	if s := runStatus(t, env, id); s != runtime.StatusCancelled {
		t.Errorf("run is %s", s)
	}
	for _, target := range []string{id, uuid.NewString()} {
		r = cliRun(t, env, nil, "cancel", target)
		if r.code != exitFailure || !strings.Contains(r.stderr, "run "+target+": unknown or already finished") || r.stdout != "" {
			t.Errorf("cancel %s: %+v", target, r)
		}
	}
}

// TestRunsAssign: runs assign gives a waiting run to a reviewer, refuses to move it to another
// without --force (naming the holder), moves it with --force, releases it, and refuses a
// support person, a finished run and a usage error.
func TestRunsAssign(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	for _, u := range [][]string{{"rita", "reviewer"}, {"bob", "admin"}, {"sam", "support"}} {
		if r := cliRun(t, env, nil, "user", "add", "--username", u[0], "--role", u[1]); r.code != exitOK {
			t.Fatalf("user add %s: %+v", u[0], r)
		}
	}
	id := newRun(t, env, false)
	if _, err := store(t, env).pool.Exec(`UPDATE tx_nrllm_agentrun SET status = 'waiting_for_approval', suspended_at = ?, suspended_state = '{}' WHERE uuid = ?`, time.Now().Unix(), id); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{id, "rita"}, exitOK, "Run " + id + " is assigned to rita.\n", ""},
		{[]string{id, "bob"}, exitFailure, "", "already_assigned: the run is assigned to rita"},
		{[]string{id, "bob", "--force"}, exitOK, "Run " + id + " is assigned to bob.\n", ""},
		{[]string{id, "--release", "--force"}, exitOK, "Run " + id + " is assigned to nobody.\n", ""},
		{[]string{id, "sam"}, exitFailure, "", "sam is support and may not decide runs"},
		{[]string{id}, exitUsage, "", "a run's uuid and one username, or --release"},
		{[]string{id, "rita", "--release"}, exitUsage, "", "--release takes no username"},
	}
	for _, s := range steps {
		r := cliRun(t, env, nil, append([]string{"runs", "assign"}, s.args...)...)
		if r.code != s.code || r.stdout != s.stdout || !strings.Contains(r.stderr, s.stderr) {
			t.Errorf("runs assign %v: %+v, want %d %q %q", s.args, r, s.code, s.stdout, s.stderr)
		}
	}
	if r := cliRun(t, env, nil, "cancel", id); r.code != exitOK {
		t.Fatalf("cancel: %+v", r)
	}
	if r := cliRun(t, env, nil, "runs", "assign", id, "rita"); r.code != exitFailure || !strings.Contains(r.stderr, "only a waiting run can be assigned") {
		t.Errorf("assign a cancelled run: %+v", r)
	}
}
