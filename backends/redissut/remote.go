package redissut

import (
	"context"
	"errors"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/remote"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/linearizability"
)

// Errors is how a failed call of a Redis-backed table reads, as
// impl/redis/rconn classifies it:
//
//   - an error wrapping rconn.ErrUnknown was sent and got no reply in
//     time: it may have committed, or may yet;
//   - one wrapping rconn.ErrNotSent reached no server, and a server's
//     refusal to run anything yet (LOADING while it loads its data after a
//     restart, READONLY from a replica not yet promoted, MASTERDOWN,
//     NOREPLICAS from a primary that has too few replicas for its
//     min-replicas-to-write and refuses a write before running it; on a
//     cluster CLUSTERDOWN, and MOVED, ASK or TRYAGAIN once rconn.Call has
//     stopped following them) ran nothing.
var Errors = remote.Errors{Unknown: rconn.ErrUnknown, NotSent: rconn.ErrNotSent, NotRun: notRunReply}

// Remote returns the recorder's backend (package linearizability) over a
// table kept on a server, as remote.Recorder does with Errors: a call of
// unknown outcome is recorded as unknown, never as failed; one that ran
// nothing is not recorded. apply is the adapter's Apply (TokenBucket's or
// Credits'). It lives here, not in package linearizability, so that the
// recorder links no Redis client.
func Remote[In, Out any](apply func(context.Context, In) (Out, error), timeout time.Duration) linearizability.Backend[In, Out] {
	return remote.Recorder(apply, timeout, Errors)
}

// notRunReply reports a server error reply that says the server ran
// nothing because it is not ready to (redis.io: LOADING, READONLY,
// MASTERDOWN, NOREPLICAS, CLUSTERDOWN) or is not the node to run it
// (MOVED, ASK, TRYAGAIN).
func notRunReply(err error) bool {
	var reply goredis.Error
	if !errors.As(err, &reply) {
		return false
	}
	msg := reply.Error()
	for _, p := range []string{"LOADING ", "READONLY ", "MASTERDOWN ", "NOREPLICAS ", "CLUSTERDOWN ", "TRYAGAIN ", "MOVED ", "ASK "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
