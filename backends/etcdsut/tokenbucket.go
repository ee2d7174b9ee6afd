package etcdsut

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	etokenbucket "github.com/tollgate/tollgate/impl/etcd/tokenbucket"
	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// etcdTokenbucketTable is the method set of *etokenbucket.Table that
// TokenBucket uses. Every mutant of impl/etcd/tokenbucket has it too (a
// copy of the package, whose Limits and ArgError are impl/tokenbucket's).
type etcdTokenbucketTable interface {
	TakeAt(ctx context.Context, nowMs int64, key string, lim etokenbucket.Limits, cost float64) (float64, bool, error)
	AdmitAt(ctx context.Context, nowMs int64, key string, lim etokenbucket.Limits, cost float64) (tokenbucket.Decision, error)
	PeekAt(ctx context.Context, nowMs int64, key string, lim etokenbucket.Limits) (float64, error)
	RetryAfterAt(ctx context.Context, nowMs int64, key string, lim etokenbucket.Limits, cost float64) (int64, error)
	Reset(ctx context.Context, key string) error
	ResetAll(ctx context.Context) error
	ReclaimAt(ctx context.Context, nowMs int64, lim etokenbucket.Limits) (int, error)
}

var _ etcdTokenbucketTable = (*etokenbucket.Table)(nil)

// TokenBucket applies model token-bucket inputs to an etcd-backed table
// (impl/etcd/tokenbucket, or a mutant of it), as sut.TokenBucket does to an
// in-memory one. It is safe for concurrent use.
type TokenBucket struct {
	table etcdTokenbucketTable
}

// NewTokenBucket returns an adapter over the table called name, on c (which
// stays the caller's), of f's package (fault.None: the real implementation;
// otherwise a fault of impl/etcd/tokenbucket, whose mutant package
// tables_gen.go builds).
func NewTokenBucket(f fault.Fault, c *clientv3.Client, name string) (*TokenBucket, error) {
	if f != fault.None && (!f.Etcd() || f.Credits()) {
		return nil, fmt.Errorf("etcdsut: %v is not a fault of the etcd token bucket", f)
	}
	t, err := newEtcdTokenbucket(f, c, name)
	if err != nil {
		return nil, err
	}
	return &TokenBucket{table: t}, nil
}

// Apply performs in on the table and returns its answer in model form,
// mapping exactly as sut.TokenBucket.Apply does: an *ArgError is the Invalid
// field of the output. Any other error is returned as it is, with a zero
// output: it wraps etokenbucket.ErrUnknown when the operation may have
// happened, ErrNotSent when it did not.
func (s *TokenBucket) Apply(ctx context.Context, in model.TBInput[string]) (model.TBOutput, error) {
	lim := etokenbucket.Limits{Capacity: in.Limits.Capacity, RefillPerSecond: in.Limits.RefillPerSecond}
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
		panic(fmt.Sprintf("etcdsut: unknown token-bucket operation %d", in.Kind))
	}
	if err != nil {
		var arg *etokenbucket.ArgError
		if errors.As(err, &arg) {
			return model.TBOutput{Invalid: arg.Field}, nil
		}
		return model.TBOutput{}, err
	}
	return out, nil
}
