package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// Defaults, as the nr-llm TYPO3 extension has them.
const (
	DefaultLease = 900 * time.Second
	MaxRequeues  = 3
	// DefaultWorkers is how many segments one process executes at a time. A segment spends
	// most of its time waiting for the model's network calls, so the slots bound concurrent
	// model calls more than CPU; each slot holds at most one database connection at a time.
	DefaultWorkers = 16
)

// Config wires a Runtime. Store and Catalog are required; the rest have defaults.
type Config struct {
	Store   runtime.Store
	Catalog runtime.Catalog
	// Tools are in-process tools, registered alongside the data-defined HTTP tools.
	Tools      []tool.Tool
	HTTPClient *http.Client
	Getenv     func(string) string
	Now        func() time.Time
	Logger     *slog.Logger
	// Host identifies this process in lease owners (`worker:<host>:<pid>:<n>`).
	Host string
	// Lease is how long a claim lasts without renewal (default 900 s).
	Lease time.Duration
	// Workers bounds concurrently executing segments (default DefaultWorkers).
	Workers int
	// PollInterval is how often idle workers look for queued runs (default 1 s).
	PollInterval time.Duration
	// ReapInterval is how often the reaper scans for stale runs (default 30 s).
	ReapInterval time.Duration
	// Hooks lets tests stop a segment at named points; nil in production.
	Hooks Hooks
	// Schemas compiles stored input schemas (default: a schema.Cache of 256).
	Schemas SchemaCompiler
	// Rules are the standing approvals that approve a turn automatically when it pauses
	// (nil: none; every turn waits for a person).
	Rules runtime.Rules
	// ExpireInterval is how often the expirer looks for due pauses (default
	// DefaultExpireInterval).
	ExpireInterval time.Duration
	// Observer counts reminders, escalations and expiries, every decision attempt and the
	// time to each decision (nil: not counted). The decision pipeline reports each attempt to
	// it, and audits a refused or replayed one through Store (newDecisionObservers).
	Observer Observer
	// ElicitationHolds bounds the calls this process holds open while a person answers their
	// server's request for input (0: DefaultElicitationHolds; negative: none, every such
	// request is declined). HoldPoll and HoldHeartbeat are how often the hold pool looks at
	// its runs and renews their heartbeats (0: DefaultHoldPoll, DefaultHoldHeartbeat).
	ElicitationHolds int
	HoldPoll         time.Duration
	HoldHeartbeat    time.Duration
	// Changed, when set, is called after each transition this runtime commits that moves a
	// run's status or pause (created, claimed, paused, decided, requeued, settled, cancelled,
	// escalated, expired): the hall of held requests polls at once (waiters.Hall.Nudge). It is
	// called on the committing goroutine and must return at once.
	Changed func()
}

// SchemaCompiler compiles a stored input schema (schema.Cache is one); it must be safe for
// concurrent use.
type SchemaCompiler interface {
	Compile(raw json.RawMessage) (*schema.Schema, error)
}

// Hooks are fault points on the resume path, enabled only in tests. Each is called with the
// run uid; a non-nil error aborts the segment there as if the process had died.
type Hooks interface {
	At(point string, runUID int64) error
}

// Runtime performs every operation on runs. It is safe for concurrent use.
type Runtime struct {
	store    runtime.Store
	catalog  runtime.Catalog
	builtin  []tool.Tool
	client   *http.Client
	getenv   func(string) string
	now      func() time.Time
	log      *slog.Logger
	host     string
	lease    time.Duration
	workers  int
	poll     time.Duration
	reap     time.Duration
	expire   time.Duration
	hooks    Hooks
	observer Observer
	rules    runtime.Rules
	schemas  SchemaCompiler
	tools    *cache.Cache[[sha256.Size]byte, *tool.Registry]
	decided  *cache.Cache[struct{}, versionedRegistry]
	facts    *schema.Facts
	counts   *cache.Cache[runtime.WaitingQuery, runtime.WaitingCounts]
	shown    shownCatalog
	pauses   *pauseMemo
	pins     *pinMemo
	digests  *schemaDigests
	holds    *holdPool

	// decisionObservers are told of every decision attempt (observeAttempt).
	decisionObservers []decisionObserver

	slots  chan struct{}
	wake   chan struct{}
	wg     sync.WaitGroup
	base   context.Context
	cancel context.CancelFunc
}

// New builds a Runtime from cfg, applying defaults.
func New(cfg Config) *Runtime {
	r := &Runtime{
		store: notifyChanges(cfg.Store, cfg.Changed), catalog: cfg.Catalog, builtin: cfg.Tools, client: cfg.HTTPClient,
		getenv: cfg.Getenv, now: cfg.Now, log: cfg.Logger, host: cfg.Host, lease: cfg.Lease,
		workers: cfg.Workers, poll: cfg.PollInterval, reap: cfg.ReapInterval, hooks: cfg.Hooks,
		rules: cfg.Rules, expire: cfg.ExpireInterval, observer: cfg.Observer,
		schemas: schema.NewCache(256), facts: schema.NewFacts(256), pauses: newPauseMemo(), digests: newSchemaDigests(),
	}
	r.pins = newPinMemo(r.digests)
	if cfg.Schemas != nil {
		r.schemas = cfg.Schemas
	}
	if r.client == nil {
		r.client = &http.Client{Timeout: 5 * time.Minute}
	}
	if r.getenv == nil {
		r.getenv = os.Getenv
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.tools, r.counts, r.shown = newRegistryCache(), newCountCache(r.now), newShownCatalog(r.now)
	r.decided = newVersionedRegistry()
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.decisionObservers = newDecisionObservers(r.observer, r.store, r.now, r.log)
	if r.host == "" {
		r.host, _ = os.Hostname()
	}
	if r.lease <= 0 {
		r.lease = DefaultLease
	}
	if r.workers <= 0 {
		r.workers = DefaultWorkers
	}
	if r.poll <= 0 {
		r.poll = time.Second
	}
	if r.reap <= 0 {
		r.reap = 30 * time.Second
	}
	if r.expire <= 0 {
		r.expire = DefaultExpireInterval
	}
	r.holds = newHoldPool(r, cfg.ElicitationHolds, cfg.HoldPoll, cfg.HoldHeartbeat)
	r.slots = make(chan struct{}, r.workers)
	r.wake = make(chan struct{}, 1)
	r.base, r.cancel = context.WithCancel(context.Background())
	return r
}

func (r *Runtime) unix() int64 { return r.now().Unix() }

func (r *Runtime) newLease(kind string) runtime.Lease {
	now := r.unix()
	return runtime.Lease{Owner: r.owner(kind), Expires: now + int64(r.lease/time.Second), Now: now}
}

func (r *Runtime) owner(kind string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	o := fmt.Sprintf("%s:%s:%d:%s", kind, r.host, os.Getpid(), hex.EncodeToString(b[:]))
	if len(o) > 64 {
		o = o[len(o)-64:]
	}
	return o
}

func (r *Runtime) hook(point string, runUID int64) error {
	if r.hooks == nil {
		return nil
	}
	return r.hooks.At(point, runUID)
}

// Wait blocks until every segment started by this Runtime has returned.
func (r *Runtime) Wait() { r.wg.Wait() }

// Close interrupts running segments at their next step boundary (handing their runs back to
// the queue), ends the calls it holds open, and waits for them to return.
func (r *Runtime) Close() {
	r.cancel()
	r.holds.wg.Wait()
	r.wg.Wait()
	r.holds.wg.Wait()
}

func (r *Runtime) loadRun(ctx context.Context, uuid string) (runtime.Run, *runtime.Error) {
	run, err := r.store.FindByUUID(ctx, uuid)
	if e := loadedRun(uuid, run, err); e != nil {
		return runtime.Run{}, e
	}
	return run, nil
}

// loadedRun is the refusal of a run read as uuid with err: not found, the store failing, or
// a stored status that is not one of ours; nil when run is usable.
func loadedRun(uuid string, run runtime.Run, err error) *runtime.Error {
	if errors.Is(err, runtime.ErrNotFound) {
		return newError(runtime.CodeRunNotFound, uuid, "no such run")
	}
	if err != nil {
		return storeError(uuid, err)
	}
	if !run.Status.Valid() {
		return newError(runtime.CodeCorruptSuspendedState, uuid, "stored status %q is unknown", string(run.Status))
	}
	return nil
}
