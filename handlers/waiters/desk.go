package waiters

import (
	"context"
	"strconv"
	"time"

	"runsdesk/runtime"
)

// Bounds of the desk's feed.
const (
	// DefaultHeartbeat is how often a quiet stream sends a heartbeat when Config.Heartbeat
	// is 0: under the 60 s a proxy commonly waits for a silent response.
	DefaultHeartbeat = 20 * time.Second
	// deskBacklog is how many batches the hall keeps for streams that resume.
	deskBacklog = 512
	// deskLimit bounds the runs one poll reads; a poll that reads that many (a burst the
	// feed cannot follow) starts the feed anew and every stream resyncs.
	deskLimit = 1000
	// deskSlack is how far before its cursor each poll reads again, for the writes that commit
	// after a later one was read (a row's change time is its statement's, not its commit's).
	deskSlack = int64(5 * time.Second / time.Microsecond)
	// deskMemory is how long a run's stamp is remembered, so a write that leaves it as it was
	// (a lease, the token counts) is not sent as a change.
	deskMemory = int64(10 * time.Minute / time.Microsecond)
)

// DeskSource reads what the desk's feed follows: every run's changes and the inbox's counts.
// *db.Store implements it.
type DeskSource interface {
	// DeskCursor is when any run last changed (unix microseconds).
	DeskCursor(ctx context.Context) (int64, error)
	// RunChanges returns up to limit runs changed after after (unix microseconds), oldest
	// first.
	RunChanges(ctx context.Context, after int64, limit int) ([]runtime.RunChange, error)
	// CountWaiting counts the waiting runs (the inbox's tabs, unfiltered).
	CountWaiting(ctx context.Context, q runtime.WaitingQuery) (runtime.WaitingCounts, error)
}

// Batch is what one poll of the desk found: the same for every stream, each of which sends
// what its viewer may see of it.
type Batch struct {
	// ID is the feed's cursor after the batch: the event id of what a stream sends of it.
	ID int64
	// Runs are the runs whose stamp changed (status, pause or assignee), each once, as read.
	Runs []runtime.RunChange
	// Inbox reports whether the inbox changed (its counts, or a run that waits or waited);
	// Counts are the inbox's counts after the batch, read once for all streams.
	Inbox  bool
	Counts runtime.WaitingCounts
}

// seen is what the feed remembers of a run: its stamp, when it changed, whether it waited.
type seen struct {
	stamp   string
	at      int64
	waiting bool
}

// desk is the hall's feed. The poll goroutine alone reads and writes cursor, known and
// counts; seeded, base and ring are guarded by the hall's mu.
type desk struct {
	src DeskSource
	// cursor is the newest change read; floor where the feed (re)started: a poll reads from
	// deskSlack before cursor but never before floor, whose changes every stream resynced past.
	cursor int64
	floor  int64
	known  map[int64]seen
	counts runtime.WaitingCounts

	seeded bool
	base   int64
	ring   []Batch
}

// Heartbeat is how often a quiet stream of this hall sends a heartbeat.
func (h *Hall) Heartbeat() time.Duration {
	if h == nil {
		return DefaultHeartbeat
	}
	return h.heartbeat
}

// Cursor is the id of the desk's newest batch: a new stream sends what comes after it. It is
// -1 until the poll first read the desk (a stream then sends every batch from the first).
func (h *Hall) Cursor() int64 {
	if h == nil {
		return -1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.newest()
}

// newest is Cursor with h.mu held.
func (h *Hall) newest() int64 {
	d := h.desk
	switch {
	case d == nil || !d.seeded:
		return -1
	case len(d.ring) > 0:
		return d.ring[len(d.ring)-1].ID
	}
	return d.base
}

// Since returns the desk's batches after cursor (an event id; -1: every batch the hall holds)
// and the id to ask after next. ok is false when the hall cannot tell what changed after
// cursor (older than its backlog, from before this process read the desk, past a burst it
// could not follow, or below -1: no id it gave): the stream tells its client to read afresh.
func (h *Hall) Since(cursor int64) (batches []Batch, next int64, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next = h.newest()
	d := h.desk
	switch {
	case cursor < -1:
		return nil, next, false
	case d == nil || !d.seeded:
		return nil, -1, cursor < 0
	case cursor >= 0 && cursor < d.base:
		return nil, next, false
	}
	for i := len(d.ring) - 1; i >= 0 && d.ring[i].ID > cursor; i-- {
		batches = d.ring[i:]
	}
	return batches, next, true
}

// readDesk reads what changed on the desk since the last poll, appends it to the backlog as
// one batch when a run's stamp changed, and returns the desk's stamp (the newest batch's id):
// its watchers are woken when it moves.
func (h *Hall) readDesk(ctx context.Context) (string, error) {
	d := h.desk
	if !d.seeded {
		if err := h.restartDesk(ctx); err != nil {
			return "", err
		}
		return h.deskStamp(), nil
	}
	changes, err := d.src.RunChanges(ctx, max(d.cursor-deskSlack, d.floor), deskLimit)
	if err != nil {
		return "", err
	}
	if len(changes) >= deskLimit {
		h.log.Warn("more runs changed at once than the live desk follows; every stream reads afresh", "runs", len(changes))
		if err := h.restartDesk(ctx); err != nil {
			return "", err
		}
		return h.deskStamp(), nil
	}
	b, countsMayMove := d.fold(changes)
	if countsMayMove {
		counts, err := d.src.CountWaiting(ctx, runtime.WaitingQuery{})
		if err != nil {
			return "", err
		}
		b.Inbox = b.Inbox || counts != d.counts
		d.counts = counts
	}
	b.Counts = d.counts
	h.mu.Lock()
	if len(b.Runs) > 0 {
		b.ID = max(b.ID, h.newest()+1)
		d.ring = append(d.ring, b)
		if over := len(d.ring) - deskBacklog; over > 0 {
			d.base = d.ring[over-1].ID
			d.ring = append(d.ring[:0:0], d.ring[over:]...)
		}
	}
	h.mu.Unlock()
	return h.deskStamp(), nil
}

// fold takes changes into the feed's memory and returns the batch of the runs whose stamp
// changed (ID the new cursor; readDesk makes it follow the last batch's), and whether the inbox's counts may have moved.
func (d *desk) fold(changes []runtime.RunChange) (Batch, bool) {
	var b Batch
	countsMayMove := false
	for _, c := range changes {
		d.cursor = max(d.cursor, c.At)
		prev, known := d.known[c.Run.UID]
		waiting := c.Run.Status.Waiting()
		d.known[c.Run.UID] = seen{stamp: c.Stamp, at: c.At, waiting: waiting}
		if known && prev.stamp == c.Stamp {
			continue
		}
		b.Runs = append(b.Runs, c)
		b.Inbox = b.Inbox || waiting || prev.waiting
		countsMayMove = countsMayMove || waiting || prev.waiting || !known
	}
	for uid, s := range d.known {
		if s.at < d.cursor-deskMemory {
			delete(d.known, uid)
		}
	}
	b.ID = d.cursor
	return b, countsMayMove
}

// restartDesk starts the feed at the desk's newest change with an empty backlog: a stream
// asking for anything before it resyncs.
func (h *Hall) restartDesk(ctx context.Context) error {
	d := h.desk
	cursor, err := d.src.DeskCursor(ctx)
	if err != nil {
		return err
	}
	counts, err := d.src.CountWaiting(ctx, runtime.WaitingQuery{})
	if err != nil {
		return err
	}
	d.cursor, d.floor, d.counts, d.known = cursor, cursor, counts, map[int64]seen{}
	h.mu.Lock()
	defer h.mu.Unlock()
	d.seeded, d.base, d.ring = true, cursor, nil
	return nil
}

// deskStamp is the desk's stamp: the newest batch's id.
func (h *Hall) deskStamp() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strconv.FormatInt(h.newest(), 10)
}
