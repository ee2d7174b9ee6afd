// Package rconn is what the Redis-backed tables of impl/redis/tokenbucket
// and impl/redis/credits share: the client they build from go-redis's own
// options (never retrying a command on its own), the loading of their Redis
// Functions libraries, and the one rule for what a failed call means.
//
// # What a failed call means
//
// A Redis call fails in one of three ways, and the tables report each
// differently:
//
//   - The server answered with an error reply (a script's refusal, a
//     wrong-type key, NOSCRIPT, OOM, READONLY): the script did not write,
//     because every script checks everything before its first write and
//     Redis runs a script to completion. The error is returned as it is.
//   - The call was never sent: dialing failed, the pool had no connection
//     in time, or the client was closed. Nothing ran. Such an error wraps
//     ErrNotSent.
//   - The call was sent and no reply came (a read timeout, a connection
//     reset, the context cancelled while waiting). The script may have run
//     and committed, or may yet run: Redis executes a command it has read
//     even when its client has gone. Such an error wraps ErrUnknown, and a
//     caller must not treat it as a refusal.
//
// That last case is why the client never retries: go-redis retries a
// command whose read timed out up to MaxRetries times (3 by default), so a
// take that committed before the timeout would be applied twice.
package rconn

import (
	"context"
	"errors"
	"fmt"
	"net"

	goredis "github.com/redis/go-redis/v9"
)

// The errors a failed call wraps (see the package doc).
var (
	// ErrUnknown: the call was sent and its outcome cannot be known; it may
	// have committed.
	ErrUnknown = errors.New("redis: outcome unknown: the call was sent and no reply came, so it may have committed")
	// ErrNotSent: the call never reached the server; nothing ran.
	ErrNotSent = errors.New("redis: the call was not sent")
)

// NewClient returns a go-redis client for opts (the caller's address, ACL
// user and password, TLS, pool and time-out settings, unchanged) with
// retries turned off: MaxRetries is forced to -1. opts is not modified.
func NewClient(opts *goredis.Options) *goredis.Client {
	o := *opts
	o.MaxRetries = -1
	return goredis.NewClient(&o)
}

// CheckClient reports an error when c would retry a command on its own.
// (go-redis normalizes MaxRetries: -1 becomes 0, and 0 becomes 3.)
func CheckClient(c *goredis.Client) error {
	if n := c.Options().MaxRetries; n != 0 {
		return fmt.Errorf("redis: the client retries a failed command up to %d times: build it with Options.MaxRetries = -1, or a take that committed before a time-out would be applied twice", n)
	}
	return nil
}

// Classify returns err, wrapped in ErrNotSent or ErrUnknown as the package
// doc says; nil and server error replies are returned unchanged.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var reply goredis.Error
	if errors.As(err, &reply) {
		return err
	}
	if errors.Is(err, goredis.ErrClosed) || err.Error() == "redis: connection pool timeout" {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return fmt.Errorf("%w: %w", ErrUnknown, err)
}

// Load makes the server hold the Functions library name with the source
// src (whose first line must be "#!lua name=<name>"): FUNCTION LOAD
// REPLACE, so a library of an older tollgate is replaced. Functions are
// kept with the data set (RDB and AOF) and replicated, so they survive a
// restart and a failover without being loaded again.
func Load(ctx context.Context, c *goredis.Client, name, src string) error {
	if err := c.FunctionLoadReplace(ctx, src).Err(); err != nil {
		return fmt.Errorf("redis: loading the %s functions library: %w", name, Classify(err))
	}
	return nil
}
