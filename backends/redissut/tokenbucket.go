package redissut

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	redistokenbucket "github.com/tollgate/tollgate/impl/redis/tokenbucket"
	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// redisTokenbucketTable is the method set of *redistokenbucket.Table that
// TokenBucket uses. Every mutant of impl/redis/tokenbucket has it too
// (a copy of the package, whose Limits and ArgError are impl/tokenbucket's).
type redisTokenbucketTable interface {
	TakeAt(ctx context.Context, nowMs int64, key string, lim redistokenbucket.Limits, cost float64) (float64, bool, error)
	AdmitAt(ctx context.Context, nowMs int64, key string, lim redistokenbucket.Limits, cost float64) (tokenbucket.Decision, error)
	PeekAt(ctx context.Context, nowMs int64, key string, lim redistokenbucket.Limits) (float64, error)
	RetryAfterAt(ctx context.Context, nowMs int64, key string, lim redistokenbucket.Limits, cost float64) (int64, error)
	Reset(ctx context.Context, key string) error
	ResetAll(ctx context.Context) error
	ReclaimAt(ctx context.Context, nowMs int64, lim redistokenbucket.Limits) (int, error)
	Close() error
}

var _ redisTokenbucketTable = (*redistokenbucket.Table)(nil)

// TokenBucket applies model token-bucket inputs to a Redis-backed table
// (impl/redis/tokenbucket, or a mutant of it), as sut.TokenBucket does to
// an in-memory one. It is safe for concurrent use.
type TokenBucket struct {
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
	if f != fault.None && (!f.Redis() || f.Credits()) {
		return nil, fmt.Errorf("redissut: %v is not a fault of the Redis token bucket", f)
	}
	var t redisTokenbucketTable
	var err error
	switch c := c.(type) {
	case *goredis.Client:
		t, err = newRedisTokenbucket(context.Background(), f, optionsOf(c), name)
	case *goredis.ClusterClient:
		t, err = newRedisTokenbucketCluster(context.Background(), f, clusterOptionsOf(c), name)
	default:
		return nil, fmt.Errorf("redissut: a %T is not supported", c)
	}
	if err != nil {
		return nil, err
	}
	return &TokenBucket{table: t}, nil
}

// Close closes the table's client.
func (s *TokenBucket) Close() error { return s.table.Close() }

// Apply performs in on the table and returns its answer in model form,
// mapping exactly as sut.TokenBucket.Apply does: an *ArgError is the Invalid
// field of the output. Any other error is returned as it is, with a zero
// output: the call failed, and its error wraps redistokenbucket.ErrUnknown
// when the operation may have happened (ErrNotSent, or a server error
// reply, when it did not).
func (s *TokenBucket) Apply(ctx context.Context, in model.TBInput[string]) (model.TBOutput, error) {
	lim := redistokenbucket.Limits{Capacity: in.Limits.Capacity, RefillPerSecond: in.Limits.RefillPerSecond}
	var out model.TBOutput
	var err error
	switch in.Kind {
	case model.TBTake:
		out.Remaining, out.OK, err = s.table.TakeAt(ctx, in.NowMs, in.Key, lim, in.Cost)
	case model.TBAdmit:
		var d tokenbucket.Decision
		d, err = s.table.AdmitAt(ctx, in.NowMs, in.Key, lim, in.Cost)
		out.OK, out.Remaining, out.RetryAfterMs = d.OK, d.Remaining, d.RetryAfterMs
	case model.TBPeek:
		out.Tokens, err = s.table.PeekAt(ctx, in.NowMs, in.Key, lim)
		out.OK = true
	case model.TBRetryAfter:
		out.RetryAfterMs, err = s.table.RetryAfterAt(ctx, in.NowMs, in.Key, lim, in.Cost)
		out.OK = true
	case model.TBReset:
		err = s.table.Reset(ctx, in.Key)
		out.OK = true
	case model.TBResetAll:
		err = s.table.ResetAll(ctx)
		out.OK = true
	case model.TBReclaim:
		out.Reclaimed, err = s.table.ReclaimAt(ctx, in.NowMs, lim)
		out.OK = true
	default:
		panic(fmt.Sprintf("redissut: unknown token-bucket operation %d", in.Kind))
	}
	if err != nil {
		var arg *redistokenbucket.ArgError
		if errors.As(err, &arg) {
			return model.TBOutput{Invalid: arg.Field}, nil
		}
		return model.TBOutput{}, err
	}
	return out, nil
}

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
