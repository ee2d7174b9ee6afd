package etcdsut

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	etokenbucket "github.com/tollgate/tollgate/impl/etcd/tokenbucket"
	"github.com/tollgate/tollgate/model"
)

// TokenBucket applies model token-bucket inputs to an etcd-backed table, as
// sut.TokenBucket does to an in-memory one. It is safe for concurrent use.
type TokenBucket struct {
	table *etokenbucket.Table
}

// NewTokenBucket returns an adapter over the table called name, on c (which
// stays the caller's).
func NewTokenBucket(c *clientv3.Client, name string) (*TokenBucket, error) {
	t, err := etokenbucket.NewFromClient(c, name)
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
