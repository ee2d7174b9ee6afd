package examples

import (
	"net/http"
	"strconv"

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
