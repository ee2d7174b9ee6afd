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
	"regexp"
	"strconv"
	"strings"

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

// TableNameRule is the rule every table name keeps, in both packages: the
// name is the hash tag of the table's keys, so it may not hold a brace, and
// it is bounded so that a key stays small.
const TableNameRule = "must be 1 to 256 bytes without '{' or '}' (it is the hash tag of the table's keys)"

// ValidTableName reports whether name keeps TableNameRule.
func ValidTableName(name string) bool {
	return name != "" && len(name) <= 256 && !strings.ContainsAny(name, "{}")
}

// ErrLibraryVersion is the error of Load when the server holds another
// version of the library than this build's and replacing it would be
// wrong: a newer version (an older process must not downgrade the library
// under the whole fleet), or the same version with other code (two builds
// claim one version).
var ErrLibraryVersion = errors.New("redis: the server holds another version of the functions library")

// versionLine is how a library's source declares its version, on a line
// of its own.
var versionLine = regexp.MustCompile(`(?m)^-- tollgate library version (\d+)$`)

// LibraryVersion is the version the library source src declares, 0 when it
// declares none (a library loaded before versions existed).
func LibraryVersion(src string) int {
	m := versionLine.FindStringSubmatch(src)
	if m == nil {
		return 0
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return v
}

// Load makes the server hold the Functions library name with the source
// src (whose first line must be "#!lua name=<name>"). Functions are kept
// with the data set (RDB and AOF) and replicated, so they survive a restart
// and a failover without being loaded again; and one library serves every
// client of the server, so loading is a fleet-wide act:
//
//   - no library of that name: FUNCTION LOAD (without REPLACE, so two
//     processes loading at once do not overwrite each other: the one that
//     loses looks again);
//   - the same code: nothing to do;
//   - an older version (or one that declares none): FUNCTION LOAD REPLACE;
//   - a newer version, or the same version with other code: an error
//     wrapping ErrLibraryVersion, which names both, and the server's
//     library stays.
func Load(ctx context.Context, c *goredis.Client, name, src string) error {
	want := LibraryVersion(src)
	for range 3 {
		libs, err := c.FunctionList(ctx, goredis.FunctionListQuery{LibraryNamePattern: name, WithCode: true}).Result()
		if err != nil {
			return fmt.Errorf("redis: listing the %s functions library: %w", name, Classify(err))
		}
		var have *goredis.Library
		for i := range libs {
			if libs[i].Name == name {
				have = &libs[i]
			}
		}
		switch {
		case have == nil:
			err := c.FunctionLoad(ctx, src).Err()
			if err != nil && strings.Contains(err.Error(), "already exists") {
				continue // another process loaded it meanwhile: judge its version
			}
			if err != nil {
				return fmt.Errorf("redis: loading the %s functions library: %w", name, Classify(err))
			}
			return nil
		case have.Code == src:
			return nil
		}
		switch v := LibraryVersion(have.Code); {
		case v > want:
			return fmt.Errorf("%w: %s version %d is loaded, this build has version %d: upgrade this process rather than replace the library every client of the server uses", ErrLibraryVersion, name, v, want)
		case v == want:
			return fmt.Errorf("%w: %s version %d is loaded with other code than this build's version %d: two builds claim one version (a changed library must raise its version line)", ErrLibraryVersion, name, v, want)
		}
		if err := c.FunctionLoadReplace(ctx, src).Err(); err != nil {
			return fmt.Errorf("redis: replacing the %s functions library: %w", name, Classify(err))
		}
		return nil
	}
	return fmt.Errorf("redis: loading the %s functions library: it changed three times while this process loaded it", name)
}
