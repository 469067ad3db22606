package db

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestRetentionSweepCostPerRun measures the runs class of a pass (each run removed with its
// output, events, transcript, call, draft, notification, its decision and audit rows cleared)
// over a slice of a tenth of the terminal runs, at a table of RUNSDESK_RETENTION_BENCH runs and
// at a tenth of it, and reports the time and this process's CPU per removed run (the database
// server's work shows in the wall time). Skipped unless RUNSDESK_RETENTION_BENCH is set; at
// 1000000 it is the sweeper benchmark's 1M/100k against 100k/10k.
func TestRetentionSweepCostPerRun(t *testing.T) {
	large, _ := strconv.Atoi(os.Getenv("RUNSDESK_RETENTION_BENCH"))
	if large < 1000 {
		t.Skip("set RUNSDESK_RETENTION_BENCH to the larger table size (e.g. 1000000)")
	}
	per := func(size int) (wall, cpu time.Duration) {
		s, pool := newStore(t)
		insertRetentionConfiguration(t, pool, 1, 30, 30, 365, false)
		slice := size / 10
		seedRetentionRuns(t, pool, 1, size-slice, "completed", 100, 1)
		seedRetentionRuns(t, pool, 1, slice, "completed", 366, 1)
		if _, err := pool.Exec(`ANALYZE TABLE tx_nrllm_agentrun, tx_nrllm_agentrun_event, tx_runsdesk_event_content, tx_runsdesk_run_output`); err != nil {
			t.Fatal(err)
		}
		// A first pass takes the outputs and transcripts of every run past 30 days (the
		// rest of the table), so the measured pass removes only the expired runs.
		if _, err := pool.Exec(`INSERT INTO tx_runsdesk_retention_mark (configuration_uid, class, swept_to) VALUES (1, 'outputs', ?), (1, 'transcripts', ?)`,
			retentionNow.Unix(), retentionNow.Unix()); err != nil {
			t.Fatal(err)
		}
		c0, w0 := processCPU(), time.Now()
		rep := sweep(t, s, false)
		wall, cpu = time.Since(w0), processCPU()-c0
		if rep.Runs != int64(slice) {
			t.Fatalf("removed %d runs, want %d", rep.Runs, slice)
		}
		t.Logf("table %d runs, slice %d: %s (%s CPU) in %d statements: %s per run, %s CPU per run",
			size, slice, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), rep.Statements,
			wall/time.Duration(slice), cpu/time.Duration(slice))
		return wall / time.Duration(slice), cpu / time.Duration(slice)
	}
	smallWall, smallCPU := per(large / 10)
	largeWall, largeCPU := per(large)
	t.Logf("per removed run, large / small: wall %.2f, client CPU %.2f", float64(largeWall)/float64(smallWall), float64(largeCPU)/float64(smallCPU))
}

// processCPU is the user and system CPU this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
