package app

import (
	"context"
	"net/http"
	"time"
)

// withRequestDeadline gives every request's context a deadline d, so that a database that
// hangs (a stopped server, a full connection pool) fails the request with an honest 503 when
// d has passed instead of holding it for as long as the hang lasts.
func withRequestDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
