package redissut

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/linearizability"
)

// Remote returns the recorder's backend (package linearizability) over a
// table kept on a server: Do calls apply with a context that expires after
// timeout (its per-call budget) and says what a failed call means, as
// impl/redis/rconn classifies it:
//
//   - an error wrapping rconn.ErrUnknown (sent, no reply in time: it may
//     have committed, or may yet) wraps linearizability.ErrUnknown: the
//     call is recorded as unknown, never as failed;
//   - one wrapping rconn.ErrNotSent (nothing reached the server), or a
//     server's refusal to run anything yet (LOADING while it loads its data
//     after a restart, READONLY from a replica not yet promoted,
//     MASTERDOWN; on a cluster CLUSTERDOWN, and MOVED, ASK or TRYAGAIN
//     once rconn.Call has stopped following them), wraps
//     linearizability.ErrNotRun: nothing ran, nothing is recorded;
//   - any other error is returned as it is and stops the recording.
//
// apply is the adapter's Apply (TokenBucket's or Credits'). The backend is
// safe for concurrent use if apply is. It lives here, not in package
// linearizability, so that the recorder links no Redis client.
func Remote[In, Out any](apply func(context.Context, In) (Out, error), timeout time.Duration) linearizability.Backend[In, Out] {
	return remote[In, Out]{apply: apply, timeout: timeout}
}

type remote[In, Out any] struct {
	apply   func(context.Context, In) (Out, error)
	timeout time.Duration
}

func (r remote[In, Out]) Do(_ int, in In) (Out, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	out, err := r.apply(ctx, in)
	return out, remoteError(err)
}

// remoteError maps an error of a server-backed table to the recorder's
// vocabulary, as Remote says; nil stays nil.
func remoteError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rconn.ErrUnknown):
		return fmt.Errorf("%w: %w", linearizability.ErrUnknown, err)
	case errors.Is(err, rconn.ErrNotSent) || notRunReply(err):
		return fmt.Errorf("%w: %w", linearizability.ErrNotRun, err)
	}
	return err
}

// notRunReply reports a server error reply that says the server ran
// nothing because it is not ready to (redis.io: LOADING, READONLY,
// MASTERDOWN, CLUSTERDOWN) or is not the node to run it (MOVED, ASK,
// TRYAGAIN).
func notRunReply(err error) bool {
	var reply goredis.Error
	if !errors.As(err, &reply) {
		return false
	}
	msg := reply.Error()
	for _, p := range []string{"LOADING ", "READONLY ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "MOVED ", "ASK "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
