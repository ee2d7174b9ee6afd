package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/model"
)

// TBTable is the method set of a server-backed token bucket
// (*impl/redis/tokenbucket.Table, *impl/etcd/tokenbucket.Table) that
// TokenBucket uses. Every mutant of those packages has it too (a copy of
// the package, whose Limits and ArgError are impl/tokenbucket's).
type TBTable interface {
	TakeAt(ctx context.Context, nowMs int64, key string, lim tokenbucket.Limits, cost float64) (float64, bool, error)
	AdmitAt(ctx context.Context, nowMs int64, key string, lim tokenbucket.Limits, cost float64) (tokenbucket.Decision, error)
	PeekAt(ctx context.Context, nowMs int64, key string, lim tokenbucket.Limits) (float64, error)
	RetryAfterAt(ctx context.Context, nowMs int64, key string, lim tokenbucket.Limits, cost float64) (int64, error)
	Reset(ctx context.Context, key string) error
	ResetAll(ctx context.Context) error
	ReclaimAt(ctx context.Context, nowMs int64, lim tokenbucket.Limits) (int, error)
}

// TokenBucket applies model token-bucket inputs to a server-backed table,
// as sut.TokenBucket does to an in-memory one. It is safe for concurrent
// use.
type TokenBucket struct {
	table TBTable
}

// NewTokenBucket returns an adapter over t.
func NewTokenBucket(t TBTable) *TokenBucket { return &TokenBucket{table: t} }

// Apply performs in on the table and returns its answer in model form,
// mapping exactly as sut.TokenBucket.Apply does: an *ArgError is the
// Invalid field of the output. Any other error is returned as it is, with a
// zero output: the call failed, and its error says (Errors) whether the
// operation may have happened.
func (s *TokenBucket) Apply(ctx context.Context, in model.TBInput[string]) (model.TBOutput, error) {
	lim := tokenbucket.Limits{Capacity: in.Limits.Capacity, RefillPerSecond: in.Limits.RefillPerSecond}
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
		panic(fmt.Sprintf("remote: unknown token-bucket operation %d", in.Kind))
	}
	if err != nil {
		var arg *tokenbucket.ArgError
		if errors.As(err, &arg) {
			return model.TBOutput{Invalid: arg.Field}, nil
		}
		return model.TBOutput{}, err
	}
	return out, nil
}
