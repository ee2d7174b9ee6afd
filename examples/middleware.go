package examples

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// RateLimit admits each request through its client's bucket (key names
// the client: its address, an API key) and answers a refusal 429 Too Many
// Requests with a Retry-After header, in whole seconds rounded up, read
// from the bucket that refused in the same call (Bound.Admit).
func RateLimit(per tokenbucket.Bound[string], key func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := per.Admit(key(r))
		if !d.OK {
			if d.RetryAfterMs != tokenbucket.Never {
				w.Header().Set("Retry-After", strconv.FormatInt((d.RetryAfterMs+999)/1000, 10))
			}
			http.Error(w, "rate limited", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Reclaim forgets, every interval until ctx is done, the buckets of tb that
// are full again under lim (ReclaimAt, T12): the clients that went away
// stop holding memory, and one that comes back starts from a full bucket,
// as it would have anyway. Run it in a goroutine of its own.
func Reclaim(ctx context.Context, tb *tokenbucket.Table[string], lim tokenbucket.Limits, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_, _ = tb.Reclaim(lim) // lim was checked by Bind; Reclaim cannot fail on it
		}
	}
}
