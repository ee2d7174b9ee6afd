package fuzz

import (
	"context"
	"fmt"
	"strconv"

	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/model"
)

// RemoteTB is a token-bucket table on a server as the Redis machines drive
// it: backends/redissut's TokenBucket. Apply's error is a call that failed
// in transport. The machines take the adapter by this interface so that
// this package, an in-memory checker, links no Redis client.
type RemoteTB interface {
	Apply(ctx context.Context, in model.TBInput[string]) (model.TBOutput, error)
}

// RemoteCr is a credit table on a server as the Redis machine drives it:
// backends/redissut's Credits, as RemoteTB.
type RemoteCr interface {
	Apply(ctx context.Context, in model.CrInput[string]) (model.CrOutput[string], error)
}

// NewRedisTBMachine returns a machine over an empty model table and the
// Redis-backed table under s, which it empties first (ResetAll). The
// machine's int keys are the table's keys as decimal strings. A call that
// fails in transport panics, which the machine reports as its failure: the
// machine runs against a healthy server, where every call has an answer.
func NewRedisTBMachine(s RemoteTB, opts Options) *TBMachine {
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
func RedisTokenBucketProp(s RemoteTB, opts Options, hook Hook) func(*rapid.T) {
	return prop(func() *TBMachine { return NewRedisTBMachine(s, opts) }, tbActions, hook)
}

// RunRedisTokenBucketBytes is RunTokenBucketBytes against the Redis-backed
// table under s: a sequence of operations decoded from data (a seeded
// random one, with RandomInput), each checked against the model.
func RunRedisTokenBucketBytes(data []byte, s RemoteTB, opts Options) *Failure {
	_, f := runBytes(NewRedisTBMachine(s, opts), tbActions, data)
	return f
}

// RunRedisHostileBytes is RunHostileBytes against the Redis-backed table
// under s.
func RunRedisHostileBytes(data []byte, s RemoteTB, opts Options) *Failure {
	_, f := runBytes(NewRedisTBMachine(s, opts), hostileActions, data)
	return f
}

// NewRedisCrMachine returns a machine over a fresh model state and the
// Redis credit table under s, which must be fresh too (a table name no one
// has used). The machine's int payloads are the table's as decimal
// strings. A call that fails in transport panics, which the machine
// reports as its failure: the machine runs against a healthy server.
func NewRedisCrMachine(s RemoteCr, opts Options) *CrMachine {
	ctx := context.Background()
	return &CrMachine{
		opts: opts,
		sut: func(in model.CrInput[int]) model.CrOutput[int] {
			out, err := s.Apply(ctx, model.CrInput[string]{Kind: in.Kind, Holder: in.Holder, Class: in.Class, Token: in.Token, Payload: strconv.Itoa(in.Payload), NowMs: in.NowMs})
			if err != nil {
				panic(fmt.Sprintf("%v: %v", in, err))
			}
			return crPayloads(out)
		},
		epochs:   map[uint64]bool{},
		payloads: map[int]*payloadInfo{},
		live:     map[model.Token]int{},
	}
}

// crPayloads is out with the payloads read back as ints. A payload that is
// not one (the table returned bytes no enqueue sent) becomes -1, which no
// enqueue sends, so the properties report it.
func crPayloads(out model.CrOutput[string]) model.CrOutput[int] {
	atoi := func(p string) int {
		if p == "" {
			return 0
		}
		n, err := strconv.Atoi(p)
		if err != nil || strconv.Itoa(n) != p {
			return -1
		}
		return n
	}
	r := model.CrOutput[int]{Result: out.Result, Token: out.Token, OK: out.OK, Payload: atoi(out.Payload),
		Count: out.Count, Snap: out.Snap, Bounds: out.Bounds}
	for _, e := range out.Entries {
		r.Entries = append(r.Entries, model.Entry[int]{Slot: e.Slot, Epoch: e.Epoch, MarkedMs: e.MarkedMs, Payload: atoi(e.Payload)})
	}
	return r
}

// RedisCreditsProp is CreditsProp against Redis credit tables: newTable
// returns a fresh one for every case.
func RedisCreditsProp(newTable func() RemoteCr, opts Options, hook Hook) func(*rapid.T) {
	return prop(func() *CrMachine { return NewRedisCrMachine(newTable(), opts) }, crActions, hook)
}

// RunRedisCreditsBytes is RunCreditsBytes against the fresh Redis credit
// table under s.
func RunRedisCreditsBytes(data []byte, s RemoteCr, opts Options) *Failure {
	_, f := runBytes(NewRedisCrMachine(s, opts), crActions, data)
	return f
}
