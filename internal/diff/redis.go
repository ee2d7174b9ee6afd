package diff

import (
	"context"
	"fmt"
	"strconv"

	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// NewRedisTBMachine returns a machine over an empty model table and the
// Redis-backed table under s, which it empties first (ResetAll). The
// machine's int keys are the table's keys as decimal strings. A call that
// fails in transport panics, which the machine reports as its failure: the
// machine runs against a healthy server, where every call has an answer.
func NewRedisTBMachine(s *sut.RedisTokenBucket, opts Options) *TBMachine {
	ctx := context.Background()
	if _, err := s.Apply(ctx, model.TBInput[string]{Kind: model.TBResetAll}); err != nil {
		panic(fmt.Sprintf("diff: emptying the Redis table: %v", err))
	}
	return &TBMachine{
		opts: opts,
		sut: func(in model.TBInput[int]) model.TBOutput {
			out, err := s.Apply(ctx, model.TBInput[string]{Kind: in.Kind, Key: strconv.Itoa(in.Key), Limits: in.Limits, Cost: in.Cost, NowMs: in.NowMs})
			if err != nil {
				panic(fmt.Sprintf("%v: %v", in, err))
			}
			return out
		},
		bound:  map[int]*model.T5Bound{},
		limits: map[int]model.Limits{},
	}
}

// RedisTokenBucketProp is TokenBucketProp against the Redis-backed table
// under s (emptied at the start of every case).
func RedisTokenBucketProp(s *sut.RedisTokenBucket, opts Options, hook Hook) func(*rapid.T) {
	return prop(func() *TBMachine { return NewRedisTBMachine(s, opts) }, tbActions, hook)
}

// RedisHostileProp is HostileProp against the Redis-backed table under s.
func RedisHostileProp(s *sut.RedisTokenBucket, opts Options, hook Hook) func(*rapid.T) {
	return prop(func() *TBMachine { return NewRedisTBMachine(s, opts) }, hostileActions, hook)
}

// RunRedisTokenBucketBytes is RunTokenBucketBytes against the Redis-backed
// table under s: a sequence of operations decoded from data (a seeded
// random one, with RandomInput), each checked against the model.
func RunRedisTokenBucketBytes(data []byte, s *sut.RedisTokenBucket, opts Options) *Failure {
	_, f := runBytes(NewRedisTBMachine(s, opts), tbActions, data)
	return f
}

// RunRedisHostileBytes is RunHostileBytes against the Redis-backed table
// under s.
func RunRedisHostileBytes(data []byte, s *sut.RedisTokenBucket, opts Options) *Failure {
	_, f := runBytes(NewRedisTBMachine(s, opts), hostileActions, data)
	return f
}
