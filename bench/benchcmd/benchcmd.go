// Package benchcmd is what the benchmark commands under bench/ start with: their main (flags,
// Ctrl-C, exit codes), the comma-separated number lists of their flags, the environment they
// measure in, and the server's status counters they measure a pass's work by.
package benchcmd

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"runsdesk/bench/benchenv"
)

// Main runs the benchmark command name until it is done or interrupted (Ctrl-C): parse reads
// its arguments, and one it refuses exits 2 with the reason; a run that fails exits 1 with
// "name: " and the error.
func Main[O any](name string, parse func(args []string) (O, error), run func(ctx context.Context, o O) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Numbers parses the comma-separated list of flag -name, each a whole number of at least least.
func Numbers(name, list string, least int) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		switch {
		case (err != nil || n < least) && least == 1:
			return nil, fmt.Errorf("-%s: %q is not a positive number", name, s)
		case err != nil || n < least:
			return nil, fmt.Errorf("-%s: %q is not a number of at least %d", name, s, least)
		}
		out = append(out, n)
	}
	return out, nil
}

// Server is the database server a benchmark measures in: RUNSDESK_DSN's when set, else a
// private one in DataDir with an InnoDB buffer pool of BufferPool MiB (0: the server's
// default, 128).
type Server struct {
	DataDir    string
	BufferPool int64
}

// Flags binds -data-dir and -buffer-pool on f to s, with their defaults.
func (s *Server) Flags(f *flag.FlagSet, dataDir string, bufferPoolMiB int64) {
	f.StringVar(&s.DataDir, "data-dir", dataDir, "data dir of the private server (ignored with RUNSDESK_DSN)")
	f.Int64Var(&s.BufferPool, "buffer-pool", bufferPoolMiB, "innodb_buffer_pool_size of the private server in MiB (0: leave the server default, 128)")
}

// PrivateDataDir is the data dir of a private server of benchmark name's own, under the
// system's temporary directory.
func PrivateDataDir(name string) string {
	return filepath.Join(os.TempDir(), "runsdesk-bench-"+name, "mysql")
}

// Start starts the environment a benchmark measures in (benchenv.Start) on s, with a logger
// to standard error at level.
func (s Server) Start(ctx context.Context, level slog.Level) (*benchenv.Env, *slog.Logger, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	env, err := benchenv.Start(ctx, benchenv.Options{DSN: os.Getenv(benchenv.EnvDSN), DataDir: s.DataDir, BufferPool: s.BufferPool << 20, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	return env, log, nil
}

// Status reads the server status counters names (SHOW GLOBAL STATUS) from the server behind
// pool: a private server runs only its benchmark, so their deltas over a pass are the pass's
// work, whatever else loads the machine.
func Status(ctx context.Context, pool *sql.DB, names []string) (map[string]float64, error) {
	rows, err := pool.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('`+strings.Join(names, "','")+`')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

// Statements is the server's count of statements clients sent (status Questions, this read
// included) as pool's server tells it, 0 when it cannot be read.
func Statements(ctx context.Context, pool *sql.DB) int64 {
	var name string
	var n int64
	if err := pool.QueryRowContext(ctx, `SHOW GLOBAL STATUS LIKE 'Questions'`).Scan(&name, &n); err != nil {
		return 0
	}
	return n
}

// CPUProfile starts a CPU profile written to dir/name (dir created when missing); stop ends
// it and closes the file.
func CPUProfile(dir, name string) (stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// SeedProgress reports the seeding of a desk of total runs on standard error, every 100,000
// runs, with the time since it began.
func SeedProgress(total int) func(done int) {
	started := time.Now()
	return func(done int) {
		if done%100000 == 0 {
			fmt.Fprintf(os.Stderr, "  seeded %d of %d runs (%s)\n", done, total, time.Since(started).Round(time.Second))
		}
	}
}

// LoadAverage is the machine's load averages over 1, 5 and 15 minutes ("unknown" when
// unreadable): the results note it, since other work on the machine moves them.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// RaiseFileLimit lifts this process's soft limit of open files to the hard one, for
// benchmarks holding many connections.
func RaiseFileLimit() error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("read the open-file limit: %w", err)
	}
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("raise the open-file limit: %w", err)
	}
	return nil
}

// InTx runs f in a transaction of pool and commits it, or rolls back when f fails: a floor's
// transaction, issued with database/sql alone.
func InTx(ctx context.Context, pool *sql.DB, f func(*sql.Tx) error) error {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("floor: begin: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("floor: commit: %w", err)
	}
	return nil
}

// Rounds runs every phase in order, rounds times, printing each result as it comes, and
// returns them all; the first error stops it.
func Rounds[R fmt.Stringer](rounds int, phases []string, phase func(name string, round int) (R, error)) ([]R, error) {
	var results []R
	for round := 1; round <= rounds; round++ {
		for _, p := range phases {
			r, err := phase(p, round)
			if err != nil {
				return nil, err
			}
			fmt.Println(r)
			results = append(results, r)
		}
	}
	return results, nil
}
