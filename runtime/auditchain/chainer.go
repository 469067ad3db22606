package auditchain

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Defaults of the chainer's settings (--audit-lag, --checkpoint-interval).
const (
	DefaultLag                = 5 * time.Second
	DefaultCheckpointInterval = time.Hour
)

// ErrBusy is returned by Store.LockChain while another process holds the chain.
var ErrBusy = errors.New("another process is appending to the audit chain")

// Store is where the chain is kept; *db.Store implements it.
type Store interface {
	// LockChain takes the desk-wide chain lease (ErrBusy while another process holds it) and
	// returns its release.
	LockChain(ctx context.Context) (release func(), err error)
	// AppendChain appends, under the lease, every unchained audit and decision row written at
	// or before cutoff (unix seconds), each table in uid order, stamping them chained at now;
	// it returns the chain's head and how many rows it appended.
	AppendChain(ctx context.Context, cutoff, now int64) (Head, int, error)
	// LastCheckpoint is the checkpoint of the highest sequence (ok false when none).
	LastCheckpoint(ctx context.Context) (c Checkpoint, ok bool, err error)
	// AddCheckpoint stores a signed checkpoint.
	AddCheckpoint(ctx context.Context, c Checkpoint) error
}

// Config configures a Chainer; zero values take the defaults.
type Config struct {
	Store Store
	// Lag is how old a row must be before it is chained (DefaultLag), so that a row committed
	// late on another node is not passed over; a pass runs every Lag.
	Lag time.Duration
	// CheckpointInterval is how often a checkpoint is signed (DefaultCheckpointInterval).
	CheckpointInterval time.Duration
	// Signer signs checkpoints; nil: none are written (logged once).
	Signer note.Signer
	// CheckpointFile, when set, is a file every checkpoint is also appended to.
	CheckpointFile string
	Now            func() time.Time
	Logger         *slog.Logger
}

// Chainer appends the audit trail to the chain and signs checkpoints in the background of a
// process; one process at a time across the desk does the work (Store.LockChain).
type Chainer struct {
	cfg Config
}

// New returns a chainer of cfg, its defaults filled in.
func New(cfg Config) *Chainer {
	if cfg.Lag <= 0 {
		cfg.Lag = DefaultLag
	}
	if cfg.CheckpointInterval <= 0 {
		cfg.CheckpointInterval = DefaultCheckpointInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Chainer{cfg: cfg}
}

// Run makes a pass every Lag until ctx ends; a pass another process holds is skipped, a
// failed one logged and retried at the next tick.
func (c *Chainer) Run(ctx context.Context) {
	if c.cfg.Signer == nil {
		c.cfg.Logger.Warn("audit chain checkpoints are not signed: set RUNSDESK_AUDIT_KEY or RUNSDESK_AUDIT_KEY_FILE (runsdesk audit keygen)")
	}
	tick := time.NewTicker(c.cfg.Lag)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, cp, err := c.Pass(ctx)
		switch {
		case errors.Is(err, ErrBusy):
			c.cfg.Logger.Debug("audit chain pass skipped: another process is chaining")
		case err != nil && ctx.Err() == nil:
			c.cfg.Logger.Error("audit chain pass failed", "err", err)
		case err == nil && (n > 0 || cp != nil):
			attrs := []any{"appended", n}
			if cp != nil {
				attrs = append(attrs, "checkpoint", cp.Seq)
			}
			c.cfg.Logger.Debug("audit chain pass", attrs...)
		}
	}
}

// Pass appends, under the chain lease, the rows older than the lag and signs a checkpoint when
// one is due; it returns how many rows it appended and the checkpoint it wrote (nil: none).
func (c *Chainer) Pass(ctx context.Context) (int, *Checkpoint, error) {
	release, err := c.cfg.Store.LockChain(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer release()
	now := c.cfg.Now()
	cutoff := now.Add(-c.cfg.Lag).Unix()
	head, n, err := c.cfg.Store.AppendChain(ctx, cutoff, now.Unix())
	if err != nil {
		return n, nil, err
	}
	// A checkpoint is due when the last is CheckpointInterval old and the chain has grown
	// since; it is stored, and appended to CheckpointFile when set.
	if c.cfg.Signer == nil || head.Seq == 0 {
		return n, nil, nil
	}
	last, ok, err := c.cfg.Store.LastCheckpoint(ctx)
	if err != nil {
		return n, nil, err
	}
	if ok && (last.Seq >= head.Seq || now.Sub(time.Unix(last.Time, 0)) < c.cfg.CheckpointInterval) {
		return n, nil, nil
	}
	cp, err := Sign(head, now, c.cfg.Signer)
	if err != nil {
		return n, nil, err
	}
	if err := c.cfg.Store.AddCheckpoint(ctx, cp); err != nil {
		return n, nil, err
	}
	if c.cfg.CheckpointFile != "" {
		if err := AppendFile(c.cfg.CheckpointFile, cp); err != nil {
			return n, &cp, err
		}
	}
	return n, &cp, nil
}
