// Package retention is how long a run's content is kept (a configuration's `retention:`),
// counted from when the run finished, and the sweeper that removes what outlived it
// (docs/configuration.md, retention).
package retention

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"
)

// Day is the unit retention is usually written in ("30d").
const Day = 24 * time.Hour

// DefaultInterval is how often each process runs a retention pass (--retention-interval).
const DefaultInterval = time.Hour

// Bounds of a retention period other than forever.
const (
	Min = time.Hour
	Max = 36500 * Day
)

// Policy is how long a run's content is kept after the run finished: its output (Outputs),
// its transcript (Transcripts) and the run itself with its events, calls and notifications
// (Runs). Zero is the class's default (DefaultOutputs, DefaultTranscripts; runs forever), so
// the zero Policy is the default policy.
type Policy struct {
	Outputs     time.Duration
	Transcripts time.Duration
	Runs        time.Duration
}

// The defaults of the classes a policy leaves at zero (runs: forever).
const (
	DefaultOutputs     = 30 * Day
	DefaultTranscripts = 30 * Day
)

// Default is the policy of a configuration without `retention:`, and of a run whose
// configuration no longer exists: outputs and transcripts 30 days, runs forever.
func Default() Policy { return Policy{} }

// Class is one kind of content a policy bounds, as the file and the reports name it.
type Class string

// The classes, in the order a pass removes them.
const (
	Outputs     Class = "outputs"
	Transcripts Class = "transcripts"
	Runs        Class = "runs"
)

// Classes are the classes in the order a pass removes them.
func Classes() []Class { return []Class{Outputs, Transcripts, Runs} }

// Of is p's period for class, its default when p leaves it at zero (0: forever).
func (p Policy) Of(class Class) time.Duration {
	switch class {
	case Outputs:
		return cmp.Or(p.Outputs, DefaultOutputs)
	case Transcripts:
		return cmp.Or(p.Transcripts, DefaultTranscripts)
	case Runs:
		return p.Runs
	}
	return 0
}

// RemovedAt is when class of a run that finished at finished is removed under p: the zero
// time while it has not finished or when p keeps it forever. A run's removal takes its output
// and transcript with it, so neither outlives the run.
func (p Policy) RemovedAt(class Class, finished time.Time) time.Time {
	if finished.IsZero() {
		return time.Time{}
	}
	d, runs := p.Of(class), p.Of(Runs)
	if runs > 0 && (d == 0 || runs < d) {
		d = runs
	}
	if d == 0 {
		return time.Time{}
	}
	return finished.Add(d)
}

// Report counts what one pass removed, or with DryRun would remove: outputs cleared,
// transcript rows deleted, runs deleted with their events, and decision and audit rows whose
// content was cleared. Statements counts the removing statements sent and Largest the most
// rows one of them removed (both 0 in a dry run).
type Report struct {
	DryRun      bool
	Outputs     int64
	Transcripts int64
	Runs        int64
	Events      int64
	Decisions   int64
	Audits      int64
	Statements  int64
	Largest     int64
}

// Total is everything the pass removed or cleared.
func (r Report) Total() int64 {
	return r.Outputs + r.Transcripts + r.Runs + r.Events + r.Decisions + r.Audits
}

// ErrBusy is returned by a pass while another process holds the sweep.
var ErrBusy = errors.New("another retention pass is running")

// Store runs one retention pass at now; *db.Store implements it. A pass that is not a dry run
// holds the desk-wide sweep lease for its length and answers ErrBusy while another holds it.
type Store interface {
	SweepRetention(ctx context.Context, now time.Time, dryRun bool) (Report, error)
}

// Sweeper runs a pass every interval in the background of a process.
type Sweeper struct {
	store    Store
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger
}

// New returns a sweeper of store every interval (DefaultInterval when not positive), on the
// clock now (time.Now when nil), logging to log (discarded when nil).
func New(store Store, interval time.Duration, now func() time.Time, log *slog.Logger) *Sweeper {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sweeper{store: store, interval: interval, now: now, log: log}
}

// Run sweeps every interval until ctx ends; a pass another process holds is skipped, a
// failed one logged and retried at the next tick.
func (s *Sweeper) Run(ctx context.Context) {
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rep, err := s.store.SweepRetention(ctx, s.now(), false)
		switch {
		case errors.Is(err, ErrBusy):
			s.log.Debug("retention pass skipped: another process is sweeping")
		case err != nil && ctx.Err() == nil:
			s.log.Error("retention pass failed", "err", err)
		case err == nil && rep.Total() > 0:
			s.log.Info("retention pass", "outputs", rep.Outputs, "transcripts", rep.Transcripts, "runs", rep.Runs,
				"events", rep.Events, "decisions", rep.Decisions, "audits", rep.Audits)
		}
	}
}
