package redissut

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/remote"
	redistokenbucket "github.com/tollgate/tollgate/impl/redis/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
)

// redisTokenbucketTable is the method set of *redistokenbucket.Table that
// TokenBucket uses. Every mutant of impl/redis/tokenbucket has it too
// (a copy of the package, whose Limits and ArgError are impl/tokenbucket's).
type redisTokenbucketTable interface {
	remote.TBTable
	Close() error
}

var _ redisTokenbucketTable = (*redistokenbucket.Table)(nil)

// TokenBucket applies model token-bucket inputs to a Redis-backed table
// (impl/redis/tokenbucket, or a mutant of it) through remote.TokenBucket:
// an *ArgError is the Invalid field of the output; any other error is
// returned as it is, with a zero output, and wraps
// redistokenbucket.ErrUnknown when the operation may have happened
// (ErrNotSent, or a server error reply, when it did not). It is safe for
// concurrent use.
type TokenBucket struct {
	*remote.TokenBucket
	table redisTokenbucketTable
}

// NewTokenBucket returns an adapter over the table called name on c's
// server, of f's package (fault.None: the real implementation; otherwise a
// fault of impl/redis/tokenbucket). The table is built by its package's New
// from a copy of c's options, so it has a client of its own, made the way
// that package makes it: a mutant of how the client is built
// (rtb-retry-on-timeout) gets its bug. c itself is not used for calls. Close
// closes the table's client; the buckets stay on the server. c may be a
// *goredis.ClusterClient: the table is then built by NewCluster.
func NewTokenBucket(f fault.Fault, c goredis.UniversalClient, name string) (*TokenBucket, error) {
	return newTokenBucket(context.Background(), f, c, name)
}

func newTokenBucket(ctx context.Context, f fault.Fault, c goredis.UniversalClient, name string) (*TokenBucket, error) {
	if f != fault.None && (!f.Redis() || f.Credits()) {
		return nil, fmt.Errorf("redissut: %v is not a fault of the Redis token bucket", f)
	}
	var t redisTokenbucketTable
	var err error
	switch c := c.(type) {
	case *goredis.Client:
		t, err = newRedisTokenbucket(ctx, f, optionsOf(c), name)
	case *goredis.ClusterClient:
		t, err = newRedisTokenbucketCluster(ctx, f, clusterOptionsOf(c), name)
	default:
		return nil, fmt.Errorf("redissut: a %T is not supported", c)
	}
	if err != nil {
		return nil, err
	}
	return &TokenBucket{TokenBucket: remote.NewTokenBucket(t), table: t}, nil
}

// Close closes the table's client.
func (s *TokenBucket) Close() error { return s.table.Close() }

// optionsOf is a copy of c's options for a client of a table's own: New
// must not normalize c's options, and the copy leaves out c's push
// notification processor, which belongs to c (a second client registering
// its handlers on it makes go-redis log "cannot overwrite existing handler"
// for every table).
func optionsOf(c *goredis.Client) *goredis.Options {
	opts := *c.Options()
	opts.PushNotificationProcessor = nil
	return &opts
}

// clusterOptionsOf is optionsOf for a cluster client.
func clusterOptionsOf(c *goredis.ClusterClient) *goredis.ClusterOptions {
	opts := *c.Options()
	return &opts
}
