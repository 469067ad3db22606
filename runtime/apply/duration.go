package apply

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration is time.ParseDuration that also takes days: a whole number of days with the
// suffix d, alone or followed by a Go duration ("90d", "1d12h"), optionally signed. A text
// without d is exactly what time.ParseDuration reads.
func ParseDuration(s string) (time.Duration, error) {
	body, neg := strings.CutPrefix(s, "-")
	if !neg {
		body = strings.TrimPrefix(body, "+")
	}
	days, rest, ok := strings.Cut(body, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	if days == "" || strings.TrimLeft(days, "0123456789") != "" {
		return 0, errors.New("apply: duration " + strconv.Quote(s) + ": days must be a whole number, like 30d")
	}
	n, err := strconv.ParseInt(days, 10, 64)
	if err != nil || n > math.MaxInt64/int64(24*time.Hour) {
		return 0, errors.New("apply: duration " + strconv.Quote(s) + " is too long")
	}
	d := time.Duration(n) * 24 * time.Hour
	if rest != "" {
		if rest[0] == '-' || rest[0] == '+' {
			return 0, errors.New("apply: duration " + strconv.Quote(s) + ": a sign only leads")
		}
		r, err := time.ParseDuration(rest)
		if err != nil {
			return 0, errors.New("apply: duration " + strconv.Quote(s) + ": " + err.Error())
		}
		if r > math.MaxInt64-d {
			return 0, errors.New("apply: duration " + strconv.Quote(s) + " is too long")
		}
		d += r
	}
	if neg {
		d = -d
	}
	return d, nil
}
