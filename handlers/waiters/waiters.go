// Package waiters runs the requests that are held open (a long-poll, later a stream or a held
// call) apart from ordinary ones. A route registered with Hall.LongLived skips the middleware
// wrapped in Hall.Unless (the admission gate, the request deadline); its handler joins the
// hall with Enter, capped at Config.Max per process, and sets its connection's deadlines
// itself (SetDeadlines: once for a long-poll, at every event and heartbeat for a stream).
// One goroutine per hall reads the state of everything its waiters watch from the database
// every Config.Interval and wakes the waiters whose watched items changed; being a database
// read, it sees changes made by any process on any node. An event stream watches the whole
// desk (KindDesk): with a Config.Desk the same poll reads the runs changed since its cursor,
// once for all streams, and keeps the result as a backlog of batches (desk.go), which each
// stream filters for its viewer. Nudge makes the poll run at once: a process's own changes
// wake its waiters within milliseconds, the interval bounds the delay of other processes'
// (a nudged poll reads the desk's feed only while a stream follows it). Close ends every
// waiter at once.
package waiters

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Defaults and bounds of a Hall.
const (
	// DefaultMax is how many waiters a process holds at once when Config.Max is 0.
	DefaultMax = 1000
	// DefaultInterval is the shared database poll's period when Config.Interval is 0.
	DefaultInterval = 500 * time.Millisecond
	// MaxHold is the longest a silent long-poll is held: under the server's 60 s write
	// timeout and the 60 s timeout common in HTTP clients.
	MaxHold = 50 * time.Second
	// chunk bounds the ids of one Source.Stamps call.
	chunk = 500
	// nudgeGap is the least time from the end of one poll to the start of a nudged one, so
	// a process whose runs change without pause polls at most about this often, not back to
	// back.
	nudgeGap = 25 * time.Millisecond
)

// The kinds of item a waiter watches, as Source.Stamps knows them.
const (
	// KindRun is a run by uuid; its stamp changes when its status or pause changes.
	KindRun = "run"
	// KindServiceAccount is a service account by name; its stamp changes when it is
	// disabled, its token rotated or its scopes changed.
	KindServiceAccount = "service_account"
	// KindDesk is the whole desk (ID ""): its stamp moves with every batch of run changes the
	// poll reads (Config.Desk; Since returns them).
	KindDesk = "desk"
)

// ErrFull is Enter's error when the hall already holds Config.Max waiters: answer 503 with
// Retry-After.
var ErrFull = errors.New("waiters: too many requests are waiting")

// Source reads the current stamp of each item of kind with one of ids: an opaque string that
// changes whenever the item changes in a way a waiter may care about. An item that does not
// exist is left out of the map. *db.Store implements it.
type Source interface {
	Stamps(ctx context.Context, kind string, ids []string) (map[string]string, error)
}

// Key names one watched item.
type Key struct {
	Kind string
	ID   string
}

// Config configures a Hall. Source is required.
type Config struct {
	Source Source
	// Max is the waiters held at once (0: DefaultMax).
	Max int
	// Interval is the period of the shared database poll (0: DefaultInterval).
	Interval time.Duration
	// Desk, when set, is what streams watching KindDesk follow (without it they are woken
	// by nothing but their heartbeat).
	Desk DeskSource
	// Heartbeat is how often a quiet stream sends a heartbeat (0: DefaultHeartbeat).
	Heartbeat time.Duration
	Logger    *slog.Logger
}

// Hall holds the waiters of one process and polls for their wakes. It is safe for concurrent
// use; a nil *Hall registers nothing, skips nothing and admits nobody (Enter: ErrFull). Build
// it with New, stop it with Close.
type Hall struct {
	src       Source
	max       int
	interval  time.Duration
	heartbeat time.Duration
	log       *slog.Logger
	desk      *desk

	routes []route

	mu      sync.Mutex
	waiters map[*Waiter]struct{}
	watched map[Key]map[*Waiter]struct{}
	stamps  map[Key]string

	nudged  chan struct{}
	closing chan struct{}
	once    sync.Once
	done    chan struct{}
}

// route is a long-lived route: method and echo path, and when it is long-lived.
type route struct {
	method, path string
	when         func(echo.Context) bool
}

// New builds a hall from cfg and starts its poll; Close stops it.
func New(cfg Config) *Hall {
	h := &Hall{src: cfg.Source, max: cfg.Max, interval: cfg.Interval, heartbeat: cfg.Heartbeat, log: cfg.Logger,
		waiters: map[*Waiter]struct{}{}, watched: map[Key]map[*Waiter]struct{}{}, stamps: map[Key]string{},
		nudged: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	if h.max <= 0 {
		h.max = DefaultMax
	}
	if h.interval <= 0 {
		h.interval = DefaultInterval
	}
	if h.heartbeat <= 0 {
		h.heartbeat = DefaultHeartbeat
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Desk != nil {
		h.desk = &desk{src: cfg.Desk, known: map[int64]seen{}}
	}
	go h.poll()
	return h
}

// LongLived registers the route method path (echo's path, e.g. "/api/v1/runs/:uuid") as
// long-lived for the requests when reports true (nil: all). Register before serving.
func (h *Hall) LongLived(method, path string, when func(echo.Context) bool) {
	if h == nil {
		return
	}
	h.routes = append(h.routes, route{method: method, path: path, when: when})
}

// IsLongLived reports whether c's request is on a long-lived route.
func (h *Hall) IsLongLived(c echo.Context) bool {
	if h == nil {
		return false
	}
	for _, r := range h.routes {
		if r.path == c.Path() && r.method == c.Request().Method && (r.when == nil || r.when(c)) {
			return true
		}
	}
	return false
}

// Unless returns mw for ordinary requests and lets long-lived ones pass it by.
func (h *Hall) Unless(mw echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		wrapped := mw(next)
		return func(c echo.Context) error {
			if h.IsLongLived(c) {
				return next(c)
			}
			return wrapped(c)
		}
	}
}

// SetDeadlines sets the read and write deadlines of w's connection d from now, replacing the
// server's: a long-lived request calls it when it starts, a stream again at every event and
// heartbeat.
func SetDeadlines(w http.ResponseWriter, d time.Duration) error {
	rc := http.NewResponseController(w)
	at := time.Now().Add(d)
	return errors.Join(rc.SetReadDeadline(at), rc.SetWriteDeadline(at))
}

// Waiter is one held request in a hall. Build it with Hall.Enter; end it with Leave.
type Waiter struct {
	h     *Hall
	keys  []Key
	wake  chan struct{}
	fresh bool
}

// Enter admits a waiter watching keys, or returns ErrFull. The waiter is woken once when the
// poll has first read all its keys (so a change between the caller's read and Enter is not
// missed) and then whenever a watched item's stamp changes.
func (h *Hall) Enter(keys ...Key) (*Waiter, error) {
	if h == nil {
		return nil, ErrFull
	}
	w := &Waiter{h: h, keys: slices.Clone(keys), wake: make(chan struct{}, 1), fresh: true}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.waiters) >= h.max {
		return nil, ErrFull
	}
	h.waiters[w] = struct{}{}
	for _, k := range w.keys {
		if h.watched[k] == nil {
			h.watched[k] = map[*Waiter]struct{}{}
		}
		h.watched[k][w] = struct{}{}
	}
	return w, nil
}

// Wake receives when the waiter should look again.
func (w *Waiter) Wake() <-chan struct{} { return w.wake }

// Closing is closed when the hall closes (shutdown): end the request now.
func (w *Waiter) Closing() <-chan struct{} { return w.h.closing }

// Leave takes the waiter out of the hall; call it exactly once.
func (w *Waiter) Leave() {
	h := w.h
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.waiters, w)
	for _, k := range w.keys {
		delete(h.watched[k], w)
		if len(h.watched[k]) == 0 {
			delete(h.watched, k)
			delete(h.stamps, k)
		}
	}
}

// Stamp is the stamp of watched item k as the last poll read it; ok is false while no waiter
// watches k or the poll has not read it yet.
func (h *Hall) Stamp(k Key) (stamp string, ok bool) {
	if h == nil {
		return "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	stamp, ok = h.stamps[k]
	return stamp, ok
}

// Waiting is the number of waiters in the hall.
func (h *Hall) Waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiters)
}

// Close ends the hall: every waiter's Closing channel closes and the poll stops. Safe to call
// more than once.
func (h *Hall) Close() {
	if h == nil {
		return
	}
	h.once.Do(func() { close(h.closing) })
	<-h.done
}

// Nudge asks for a poll now, when something a waiter may watch changed in this process: it
// starts at once when none runs (at least nudgeGap after the last), else once after the one
// running; the nudges until it starts are one. It never blocks; a nil *Hall ignores it.
func (h *Hall) Nudge() {
	if h == nil {
		return
	}
	select {
	case h.nudged <- struct{}{}:
	default:
	}
}

// poll reads the watched stamps every interval, and after each Nudge, until Close. A nudged
// poll starts after its rest, so it also answers the nudges sent while it rested.
func (h *Hall) poll() {
	defer close(h.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-h.closing
		cancel()
	}()
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	var last time.Time
	for {
		desk := true
		select {
		case <-h.closing:
			return
		case <-tick.C:
		case <-h.nudged:
			if !h.rest(time.Until(last.Add(nudgeGap))) {
				return
			}
			select {
			case <-h.nudged:
			default:
			}
			desk = h.watching(Key{Kind: KindDesk})
		}
		h.pollOnce(ctx, desk)
		last = time.Now()
	}
}

// watching reports whether a waiter watches k.
func (h *Hall) watching(k Key) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watched[k]) > 0
}

// rest waits d (nothing when d is not positive); false when the hall closed meanwhile.
func (h *Hall) rest(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.closing:
		return false
	case <-t.C:
		return true
	}
}

// pollOnce reads the stamps of every watched item and wakes the waiters of those that
// changed, and every waiter new since the last poll. The desk's feed is read when desk is
// set: at every periodic poll, streams or not, so a page names a cursor at most an interval
// old (Cursor), and at a nudged one while a stream follows it.
func (h *Hall) pollOnce(ctx context.Context, desk bool) {
	byKind := map[string][]string{}
	h.mu.Lock()
	for k := range h.watched {
		byKind[k.Kind] = append(byKind[k.Kind], k.ID)
	}
	h.mu.Unlock()
	read := map[Key]string{}
	failed := map[string]bool{}
	if desk {
		h.pollDesk(ctx, read, failed)
	} else {
		failed[KindDesk] = true
	}
	for kind, ids := range byKind {
		if kind == KindDesk {
			continue
		}
		for part := range slices.Chunk(ids, chunk) {
			stamps, err := h.src.Stamps(ctx, kind, part)
			if err != nil {
				if ctx.Err() == nil {
					h.log.Warn("reading what waiting requests watch failed", "kind", kind, "err", err)
				}
				failed[kind] = true
				break
			}
			for _, id := range part {
				read[Key{kind, id}] = stamps[id]
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, subs := range h.watched {
		stamp, ok := read[k]
		if !ok || failed[k.Kind] {
			continue
		}
		if prev, seen := h.stamps[k]; seen && prev != stamp {
			for w := range subs {
				w.signal()
			}
		}
		h.stamps[k] = stamp
	}
	for w := range h.waiters {
		if w.fresh && h.baselined(w) {
			w.fresh = false
			w.signal()
		}
	}
}

// pollDesk reads the desk's feed into read, or marks it failed (without a Desk: failed).
func (h *Hall) pollDesk(ctx context.Context, read map[Key]string, failed map[string]bool) {
	if h.desk == nil {
		failed[KindDesk] = true
		return
	}
	stamp, err := h.readDesk(ctx)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("reading the desk's changes for its event streams failed", "err", err)
		}
		failed[KindDesk] = true
		return
	}
	read[Key{Kind: KindDesk}] = stamp
}

// baselined reports whether every item w watches has a stamp recorded, so that any later
// change wakes it. h.mu is held.
func (h *Hall) baselined(w *Waiter) bool {
	for _, k := range w.keys {
		if _, ok := h.stamps[k]; !ok {
			return false
		}
	}
	return true
}

func (w *Waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
