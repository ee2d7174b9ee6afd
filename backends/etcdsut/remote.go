package etcdsut

import (
	"context"
	"time"

	"github.com/tollgate/tollgate/backends/remote"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/linearizability"
)

// Errors is how a failed call of an etcd-backed table reads, as
// impl/etcd/econn classifies it: an error wrapping econn.ErrUnknown (a
// write sent, no answer in time) may have committed, or may yet; one
// wrapping econn.ErrNotSent wrote nothing.
var Errors = remote.Errors{Unknown: econn.ErrUnknown, NotSent: econn.ErrNotSent}

// Remote returns the recorder's backend (package linearizability) over an
// etcd-backed table, as remote.Recorder does with Errors: a call of unknown
// outcome is recorded as unknown, never as failed; one that wrote nothing
// is not recorded; any other error stops the recording. apply is the
// adapter's Apply.
func Remote[In, Out any](apply func(context.Context, In) (Out, error), timeout time.Duration) linearizability.Backend[In, Out] {
	return remote.Recorder(apply, timeout, Errors)
}
