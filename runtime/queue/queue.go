// Package queue is the desk's queue health: per configuration and tool, what waits now and
// since when, how many decisions were taken and how long they took, what is about to expire,
// what was escalated and which notifications failed; per person, their decisions. The store
// reads grouped counts (db.Store.QueueHealth) and hands them to a Builder, which files each
// under its configuration, its configuration and tool, and the whole desk; ages and times to
// decision are kept as counts in fixed buckets (Bounds), so percentiles are approximate.
package queue

import (
	"cmp"
	"slices"
	"strings"
)

// Windows of the decision figures, in seconds: the last day and the last week.
const (
	Day  = 86400
	Week = 7 * Day
)

// ExpiringSoon is how close an expiry counts as "expiring within 1 h", in seconds (the inbox's
// deadline=soon filter).
const ExpiringSoon = 3600

// Buckets is the number of buckets of a Histogram: one per bound of Bounds, and one above.
const Buckets = 14

// Bounds are the buckets' upper bounds in seconds, exclusive: 10 s, 30 s, 1 min, 5 min, 15 min,
// 30 min, 1 h, 2 h, 4 h, 12 h, 1 d, 3 d, 7 d; the last bucket holds 7 d and more. Bucket i holds
// values v with Bounds()[i-1] <= v < Bounds()[i] (MariaDB's INTERVAL(v, bounds…) is i).
func Bounds() []int64 {
	return []int64{10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800}
}

// Bucket is the bucket of a value of v seconds (as INTERVAL computes it).
func Bucket(v int64) int {
	n, _ := slices.BinarySearch(Bounds(), v+1)
	return n
}

// Histogram counts values by bucket.
type Histogram [Buckets]int64

// Add counts n values in bucket b; a bucket out of range is ignored (a value the store could
// not place, such as a decision whose pause start is unknown).
func (h *Histogram) Add(b int, n int64) {
	if b >= 0 && b < Buckets {
		h[b] += n
	}
}

// Total is the number of values counted.
func (h Histogram) Total() int64 {
	var t int64
	for _, n := range h {
		t += n
	}
	return t
}

// Quantile is the upper bound, in seconds, of the bucket holding the q-quantile (0 < q <= 1)
// of the values counted: the true value is below it and at or above the bound before. ok is
// false when nothing was counted; the last bucket has no upper bound and answers 0 with over
// set (the quantile is 7 days or more).
func (h Histogram) Quantile(q float64) (bound int64, over, ok bool) {
	total := h.Total()
	if total == 0 {
		return 0, false, false
	}
	rank := int64(q * float64(total))
	if float64(rank) < q*float64(total) {
		rank++
	}
	rank = max(rank, 1)
	bounds := Bounds()
	var seen int64
	for i, n := range h {
		seen += n
		if seen >= rank {
			if i == len(bounds) {
				return 0, true, true
			}
			return bounds[i], false, true
		}
	}
	return 0, true, true
}

// LowerBound is the lower bound, in seconds, of the bucket a Quantile answered: the bound
// before bound, or the last bound when over.
func LowerBound(bound int64, over bool) int64 {
	bounds := Bounds()
	if over {
		return bounds[len(bounds)-1]
	}
	lower := int64(0)
	for _, b := range bounds {
		if b >= bound {
			break
		}
		lower = b
	}
	return lower
}

// Class is who took a decision.
type Class int

// Classes of deciders: a person (decided_by > 0), a standing approval (a service name
// "rule:…"), another service account, or the pause's expiry (kind expiry).
const (
	ClassPerson Class = iota
	ClassRule
	ClassService
	ClassExpiry
	Classes // the number of classes
)

// String is the class's name as the API and the metrics label it.
func (c Class) String() string {
	switch c {
	case ClassPerson:
		return "person"
	case ClassRule:
		return "rule"
	case ClassService:
		return "service"
	case ClassExpiry:
		return "expiry"
	}
	return "unknown"
}

// Key names a row of figures: a configuration (its identifier) and a tool; Tool "" is the
// whole configuration, both "" the whole desk.
type Key struct {
	Configuration string
	Tool          string
}

// Decided are the decisions of one class: how many in the last day and week, and the times
// to decision of the week's decisions whose pause start is known (see db.Store.QueueHealth).
type Decided struct {
	Day, Week int64
	Times     Histogram
}

// Figures are one row of the queue's health. A run waiting on several tools counts under
// each of them, and once under its configuration and the desk.
type Figures struct {
	Key
	// WaitingApproval and WaitingInput are the runs waiting now, per pause kind.
	WaitingApproval, WaitingInput int64
	// OldestSince is when the longest-waiting of them paused (unix seconds; 0: none waits).
	OldestSince int64
	// Ages are the waiting runs' ages as of the reading.
	Ages Histogram
	// Decided are the decisions of the last week by Class.
	Decided [Classes]Decided
	// ExpiringSoon are the waiting runs expiring within ExpiringSoon; Escalated those escalated.
	ExpiringSoon, Escalated int64
	// FailedNotifications are the notifications created in the last week that failed.
	FailedNotifications int64
}

// Waiting is the number of runs waiting now, of both kinds.
func (f Figures) Waiting() int64 { return f.WaitingApproval + f.WaitingInput }

// Decisions is the number of decisions of every class in the last day (day) or week.
func (f Figures) Decisions(day bool) int64 {
	var n int64
	for _, d := range f.Decided {
		if day {
			n += d.Day
		} else {
			n += d.Week
		}
	}
	return n
}

// Person is one person's decisions of the last week and their times to decision.
type Person struct {
	UID       int64
	Name      string
	Decisions int64
	Times     Histogram
}

// Health is the queue's health as of Now (unix seconds): Rows sorted with the desk first,
// then each configuration followed by its tools; People (when read) by decisions, most first.
type Health struct {
	Now    int64
	Rows   []Figures
	People []Person
}

// Row is the figures of k (zero figures when nothing counted under it).
func (h Health) Row(k Key) Figures {
	i := slices.IndexFunc(h.Rows, func(f Figures) bool { return f.Key == k })
	if i < 0 {
		return Figures{Key: k}
	}
	return h.Rows[i]
}

// Builder files the store's grouped counts under their rows. Not safe for concurrent use.
type Builder struct {
	rows   map[Key]*Figures
	people map[int64]*Person
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{rows: map[Key]*Figures{}, people: map[int64]*Person{}}
}

// under calls f on the rows a group of configuration cfg and comma-joined tools counts under:
// the desk, the configuration and each of its tools (the desk alone without a configuration).
func (b *Builder) under(cfg, tools string, f func(*Figures)) {
	keys := []Key{{}}
	if cfg != "" {
		keys = append(keys, Key{Configuration: cfg})
	} else {
		tools = ""
	}
	for t := range strings.SplitSeq(tools, ",") {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(keys, Key{cfg, t}) {
			keys = append(keys, Key{cfg, t})
		}
	}
	for _, k := range keys {
		r, ok := b.rows[k]
		if !ok {
			r = &Figures{Key: k}
			b.rows[k] = r
		}
		f(r)
	}
}

// WaitingGroup is one group of waiting runs as the store counts them: of one configuration,
// pending tools (comma-joined), pause kind and age bucket.
type WaitingGroup struct {
	Configuration, Tools string
	Input                bool
	Bucket               int
	Runs                 int64
	// OldestSince is the earliest pause start of the group; Expiring and Escalated count its
	// runs expiring within ExpiringSoon and escalated.
	OldestSince         int64
	Expiring, Escalated int64
}

// Waiting files a group of waiting runs.
func (b *Builder) Waiting(g WaitingGroup) {
	b.under(g.Configuration, g.Tools, func(f *Figures) {
		if g.Input {
			f.WaitingInput += g.Runs
		} else {
			f.WaitingApproval += g.Runs
		}
		if g.OldestSince > 0 && (f.OldestSince == 0 || g.OldestSince < f.OldestSince) {
			f.OldestSince = g.OldestSince
		}
		f.Ages.Add(g.Bucket, g.Runs)
		f.ExpiringSoon += g.Expiring
		f.Escalated += g.Escalated
	})
}

// DecisionGroup is one group of the week's decisions as the store counts them: of one
// configuration, pending tools, Class and time-to-decision bucket (-1: pause start unknown),
// with how many of them fall in the last day.
type DecisionGroup struct {
	Configuration, Tools string
	Class                Class
	Bucket               int
	Week, Day            int64
}

// Decided files a group of decisions; a class out of range is ignored.
func (b *Builder) Decided(g DecisionGroup) {
	if g.Class < 0 || g.Class >= Classes {
		return
	}
	b.under(g.Configuration, g.Tools, func(f *Figures) {
		d := &f.Decided[g.Class]
		d.Week += g.Week
		d.Day += g.Day
		d.Times.Add(g.Bucket, g.Week)
	})
}

// Failed files n failed notifications about a pause of configuration cfg and tool ("" for
// none).
func (b *Builder) Failed(cfg, tool string, n int64) {
	b.under(cfg, tool, func(f *Figures) { f.FailedNotifications += n })
}

// Person files n decisions of person uid (named name) in time-to-decision bucket bucket (-1:
// unknown).
func (b *Builder) Person(uid int64, name string, bucket int, n int64) {
	p, ok := b.people[uid]
	if !ok {
		p = &Person{UID: uid, Name: name}
		b.people[uid] = p
	}
	p.Decisions += n
	p.Times.Add(bucket, n)
}

// Health is what was filed, as of now. The desk's row is always there.
func (b *Builder) Health(now int64) Health {
	if _, ok := b.rows[Key{}]; !ok {
		b.rows[Key{}] = &Figures{}
	}
	h := Health{Now: now, Rows: make([]Figures, 0, len(b.rows)), People: make([]Person, 0, len(b.people))}
	for _, f := range b.rows {
		h.Rows = append(h.Rows, *f)
	}
	slices.SortFunc(h.Rows, func(a, b Figures) int {
		return cmp.Or(cmp.Compare(a.Configuration, b.Configuration), cmp.Compare(a.Tool, b.Tool))
	})
	for _, p := range b.people {
		h.People = append(h.People, *p)
	}
	slices.SortFunc(h.People, func(a, b Person) int {
		return cmp.Or(cmp.Compare(b.Decisions, a.Decisions), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	return h
}
