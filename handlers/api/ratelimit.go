package api

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

const limitKey = "runsdesk.api.limit"

// Eviction bounds of a limiter's map.
const (
	limiterMaxEntries = 10000
	limiterSweepEvery = time.Minute
)

// limiter is a token bucket per key. The API has two: one per authenticated token, keyed by
// the token's SHA-256 so the map never holds a secret (only tokens that authenticated get an
// entry, so it grows with the service accounts in use), and one per client address that
// failed to authenticate (an entry only once an address fails). Entries idle longer than it
// takes a bucket to refill are swept, and the least recently used entry is dropped when the
// map is full. Evicting an idle entry loses nothing: its bucket was full again.
type limiter struct {
	mu        sync.Mutex
	every     rate.Limit
	burst     int
	idle      time.Duration
	now       func() time.Time
	entries   map[string]*limitEntry
	lastSweep time.Time
}

type limitEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(every rate.Limit, burst int, now func() time.Time) *limiter {
	refill := time.Duration(float64(burst) / float64(every) * float64(time.Second))
	return &limiter{every: every, burst: burst, idle: max(refill, 10*time.Minute), now: now, entries: map[string]*limitEntry{}}
}

func limitKeyOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// allow takes one request from key's bucket; when it is empty it reports how long until one
// is available.
func (l *limiter) allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	r := l.entry(key, now).lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); !r.OK() || d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// take removes one request from key's bucket, if it holds one.
func (l *limiter) take(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.entry(key, now).lim.AllowN(now, 1)
}

// wait reports how long until key's bucket holds a request again, taking nothing; 0 when it
// holds one now or key has no bucket.
func (l *limiter) wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	if !ok || l.every == rate.Inf {
		return 0
	}
	tokens := e.lim.TokensAt(l.now())
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(l.every) * float64(time.Second))
}

// entry returns key's bucket, creating a full one, and marks it used at now.
func (l *limiter) entry(key string, now time.Time) *limitEntry {
	l.sweep(now)
	e, ok := l.entries[key]
	if !ok {
		e = &limitEntry{lim: rate.NewLimiter(l.every, l.burst)}
		l.entries[key] = e
	}
	e.seen = now
	return e
}

func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) >= limiterSweepEvery {
		l.lastSweep = now
		for k, e := range l.entries {
			if now.Sub(e.seen) > l.idle {
				delete(l.entries, k)
			}
		}
	}
	if len(l.entries) < limiterMaxEntries {
		return
	}
	var oldest string
	var at time.Time
	for k, e := range l.entries {
		if oldest == "" || e.seen.Before(at) {
			oldest, at = k, e.seen
		}
	}
	delete(l.entries, oldest)
}

// limit applies the per-token rate limit after authentication: an exhausted budget is 429
// with Retry-After.
func (a *API) limit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key, _ := c.Get(limitKey).(string)
		if ok, wait := a.limiter.allow(key); !ok {
			return rateLimited(c, wait, "too many requests for this token; retry later")
		}
		return next(c)
	}
}

// rateLimited is the 429 "rate_limited" with message, telling the client to retry after wait
// (whole seconds, at least 1).
func rateLimited(c echo.Context, wait time.Duration, message string) error {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(secs))
	return apiError(http.StatusTooManyRequests, "rate_limited", message)
}
