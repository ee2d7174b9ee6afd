// Package remote is the one adapter of the server-backed tables (the Redis
// ones of impl/redis, the etcd ones of impl/etcd): it applies the model's
// inputs to a table kept on a server, as internal/sut does to an in-process
// one, and says what a failed call means to the checkers that drive it (the
// linearizability recorder, the conform driver). backends/redissut and
// backends/etcdsut keep only what differs per backend: how a table is
// built, how a model holder becomes a holder of the table, and which errors
// say that a call ran, may have run, or did not.
//
// It may import impl/'s shared value types, internal/sut, model,
// linearizability and conform; no client of Redis or etcd.
package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/linearizability"
)

// Errors is how a backend's failed calls read: the errors its connection
// package (impl/redis/rconn, impl/etcd/econn) wraps a failed call in.
type Errors struct {
	// Unknown is wrapped by a call that was sent and got no answer in
	// time: it may have committed, or may yet.
	Unknown error
	// NotSent is wrapped by a call that never reached the server: nothing
	// ran.
	NotSent error
	// NotRun, if not nil, reports another error that says the server ran
	// nothing (a server's refusal to run anything yet).
	NotRun func(error) bool
}

// notRun reports whether err says that nothing ran.
func (e Errors) notRun(err error) bool {
	return errors.Is(err, e.NotSent) || e.NotRun != nil && e.NotRun(err)
}

// Recorded maps an error of a server-backed table to the recorder's
// vocabulary: one wrapping e.Unknown wraps linearizability.ErrUnknown (the
// call is recorded as unknown, never as failed); one that says nothing ran
// (e.NotSent, e.NotRun) wraps linearizability.ErrNotRun (nothing is
// recorded); any other error is returned as it is, and stops the
// recording. nil stays nil.
func (e Errors) Recorded(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, e.Unknown):
		return fmt.Errorf("%w: %w", linearizability.ErrUnknown, err)
	case e.notRun(err):
		return fmt.Errorf("%w: %w", linearizability.ErrNotRun, err)
	}
	return err
}

// Recorder returns the recorder's backend (package linearizability) over a
// table kept on a server: Do calls apply with a context that expires after
// timeout (its per-call budget) and maps a failed call's error as
// errs.Recorded says. apply is the adapter's Apply (TokenBucket's or
// Credits'). The backend is safe for concurrent use if apply is.
func Recorder[In, Out any](apply func(context.Context, In) (Out, error), timeout time.Duration, errs Errors) linearizability.Backend[In, Out] {
	return recorder[In, Out]{apply: apply, timeout: timeout, errs: errs}
}

type recorder[In, Out any] struct {
	apply   func(context.Context, In) (Out, error)
	timeout time.Duration
	errs    Errors
}

func (r recorder[In, Out]) Do(_ int, in In) (Out, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	out, err := r.apply(ctx, in)
	return out, r.errs.Recorded(err)
}

// Sends and SendPause are how often Send sends a call that could not be
// sent, and how long it waits between tries.
const (
	Sends     = 10
	SendPause = 50 * time.Millisecond
)

// Send makes one call with a context that expires after timeout, sending
// it again (up to Sends times, SendPause apart) while it could not be sent
// (errs.NotSent): nothing ran, so that is safe. An error that leaves the
// call's outcome unknown (errs.Unknown, or NotSent after the last try) is
// returned through conform.OutcomeUnknown; any other (a server's refusal)
// as it is.
func Send[Out any](timeout time.Duration, errs Errors, call func(context.Context) (Out, error)) (Out, error) {
	var out Out
	var err error
	for range Sends {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		out, err = call(ctx)
		cancel()
		if !errors.Is(err, errs.NotSent) {
			break
		}
		time.Sleep(SendPause)
	}
	if errors.Is(err, errs.Unknown) || errors.Is(err, errs.NotSent) {
		return out, conform.OutcomeUnknown(err)
	}
	return out, err
}
