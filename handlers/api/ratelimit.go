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

// Eviction bounds of the per-token limiter map.
const (
	limiterMaxEntries = 10000
	limiterSweepEvery = time.Minute
)

// limiter is a token bucket per authenticated token, keyed by the token's SHA-256 so the map
// never holds a secret. Only tokens that authenticated get an entry, so the map grows with
// the number of service accounts in use, not with what clients send; entries idle longer than
// it takes a bucket to refill are swept, and the least recently used entry is dropped when the
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
	l.sweep(now)
	e, ok := l.entries[key]
	if !ok {
		e = &limitEntry{lim: rate.NewLimiter(l.every, l.burst)}
		l.entries[key] = e
	}
	e.seen = now
	r := e.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); !r.OK() || d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
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
// with Retry-After (whole seconds, at least 1).
func (a *API) limit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key, _ := c.Get(limitKey).(string)
		if ok, wait := a.limiter.allow(key); !ok {
			secs := max(int(math.Ceil(wait.Seconds())), 1)
			c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(secs))
			return apiError(http.StatusTooManyRequests, "rate_limited", "too many requests for this token; retry later")
		}
		return next(c)
	}
}
