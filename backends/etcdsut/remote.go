package etcdsut

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/linearizability"
)

// Remote returns the recorder's backend (package linearizability) over an
// etcd-backed table: Do calls apply with a context that expires after
// timeout (its per-call budget) and says what a failed call means, as
// impl/etcd/econn classifies it: an error wrapping econn.ErrUnknown (a
// write sent, no answer in time: it may have committed, or may yet) wraps
// linearizability.ErrUnknown, and is recorded as unknown, never as failed;
// one wrapping econn.ErrNotSent (nothing was written) wraps
// linearizability.ErrNotRun, and is not recorded; any other error is
// returned as it is and stops the recording. apply is the adapter's Apply.
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
	switch {
	case err == nil:
	case errors.Is(err, econn.ErrUnknown):
		err = fmt.Errorf("%w: %w", linearizability.ErrUnknown, err)
	case errors.Is(err, econn.ErrNotSent):
		err = fmt.Errorf("%w: %w", linearizability.ErrNotRun, err)
	}
	return out, err
}
