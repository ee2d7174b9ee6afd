// Package sut ("system under test") drives the implementations in impl/ with
// the model's inputs and reports their answers as the model's outputs. It is
// the one place that translates between the two vocabularies, so every
// checker (the rapid machines, the fuzz targets, the linearizability
// recorder, the conformance driver) compares model.Step with Apply and
// restates nothing.
//
// The adapters drive a table through the TBTable and CrTable interfaces,
// which the real tables of impl/ and every generated mutant table
// (internal/mutants, selected by a fault.Fault) satisfy alike, so every
// checker runs against a mutant exactly as against the real code.
//
// The adapters of the Redis-backed tables (impl/redis/...) live in
// backends/redissut, so that the in-memory checkers built on this package
// do not link a Redis client.
//
// The adapters are safe for concurrent use when the table under them is.
package sut

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/internal/epochs"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// TBTable is the method set of *tokenbucket.Table that the checkers use.
// Every mutant table has it too (its Limits and ArgError are aliases of
// impl/tokenbucket's).
type TBTable[K comparable] interface {
	TakeAt(nowMs int64, key K, lim tokenbucket.Limits, cost float64) (remaining float64, ok bool, err error)
	AdmitAt(nowMs int64, key K, lim tokenbucket.Limits, cost float64) (tokenbucket.Decision, error)
	PeekAt(nowMs int64, key K, lim tokenbucket.Limits) (float64, error)
	RetryAfterAt(nowMs int64, key K, lim tokenbucket.Limits, cost float64) (int64, error)
	Reset(key K)
	ResetAll()
	ReclaimAt(nowMs int64, lim tokenbucket.Limits) (int, error)
	CASRetries() uint64
}

// TBWaiter is the blocking take of a token-bucket table (Table.Wait), which
// the tables NewHookedTBTableOn makes have: it reads the table's clock and
// sleeps with the table's sleep, both given to the constructor.
type TBWaiter[K comparable] interface {
	Wait(ctx context.Context, key K, lim tokenbucket.Limits, cost float64) (remaining float64, err error)
}

// TBClock is a token-bucket table's clock and sleep (tokenbucket.WithClock
// and WithSleep), for the tables NewHookedTBTableOn makes.
type TBClock struct {
	Now   func() int64
	Sleep func(ctx context.Context, d time.Duration) error
}

// CrTable is the method set of *credits.Table that the checkers use. Every
// mutant table has it too (its Token, Holder, Result, Entry and Snapshot are
// aliases of impl/credits's).
type CrTable[P any] interface {
	Reserve(h *credits.Holder, c credits.Class) (credits.Token, credits.Result)
	EnqueueAt(nowMs int64, h *credits.Holder, tok credits.Token, payload P) credits.Result
	Take(tok credits.Token) (P, bool)
	Finish(tok credits.Token) bool
	Release(h *credits.Holder, tok credits.Token) bool
	Sweep() int
	Enqueued() []credits.Entry[P]
	Snapshot() credits.Snapshot
	Close()
	Closed() bool
	CASRetries() uint64
}

var (
	_ TBTable[string] = (*tokenbucket.Table[string])(nil)
	_ CrTable[string] = (*credits.Table[string])(nil)
)

// TokenBucket applies model token-bucket inputs to an implementation table.
type TokenBucket[K comparable] struct {
	Table TBTable[K]
}

// NewTokenBucket returns an adapter over a new table of f's package
// (fault.None: the real implementation). Only the …At operations are used,
// so the table's own clock never matters.
func NewTokenBucket[K comparable](f fault.Fault) *TokenBucket[K] {
	return &TokenBucket[K]{Table: NewTBTable[K](f)}
}

// Apply performs in on the table and returns its answer in model form.
func (s *TokenBucket[K]) Apply(in model.TBInput[K]) model.TBOutput {
	lim := tokenbucket.Limits{Capacity: in.Limits.Capacity, RefillPerSecond: in.Limits.RefillPerSecond}
	var out model.TBOutput
	var err error
	switch in.Kind {
	case model.TBTake:
		out.Remaining, out.OK, err = s.Table.TakeAt(in.NowMs, in.Key, lim, in.Cost)
	case model.TBAdmit:
		var d tokenbucket.Decision
		d, err = s.Table.AdmitAt(in.NowMs, in.Key, lim, in.Cost)
		out.OK, out.Remaining, out.RetryAfterMs = d.OK, d.Remaining, d.RetryAfterMs
	case model.TBPeek:
		out.Tokens, err = s.Table.PeekAt(in.NowMs, in.Key, lim)
		out.OK = true
	case model.TBRetryAfter:
		out.RetryAfterMs, err = s.Table.RetryAfterAt(in.NowMs, in.Key, lim, in.Cost)
		out.OK = true
	case model.TBReset:
		s.Table.Reset(in.Key)
		out.OK = true
	case model.TBResetAll:
		s.Table.ResetAll()
		out.OK = true
	case model.TBReclaim:
		out.Reclaimed, err = s.Table.ReclaimAt(in.NowMs, lim)
		out.OK = true
	default:
		panic(fmt.Sprintf("sut: unknown token-bucket operation %d", in.Kind))
	}
	if err != nil {
		arg, ok := err.(*tokenbucket.ArgError)
		if !ok {
			panic(fmt.Sprintf("sut: token bucket returned a %T, not an *ArgError: %v", err, err))
		}
		return model.TBOutput{Invalid: arg.Field}
	}
	return out
}

// Credits applies model credit-table inputs to an implementation table.
// Model holder IDs map to implementation holders created on first use.
// Epochs are named by a TableEpochs: the zero Credits renames them into the
// model's numbering, NewCreditsAsIssued passes them through.
type Credits[P comparable] struct {
	Table CrTable[P]
	// Exit, when set, is how a holder exits (nil: Holder.Exit): the
	// explorer's is the explored copy's ExitHolder, whose store its race
	// detector sees.
	Exit    func(*credits.Holder)
	holders sync.Map // model.HolderID → *credits.Holder
	epochs  TableEpochs
}

// TableEpochs is how an adapter (Credits, and backends/redissut's) names a
// credit table's epochs in the model's vocabulary. Epochs are opaque (C3
// asks only that each be unique), so the zero value renames them through
// internal/epochs: the n-th distinct epoch the table issues is n, which is
// the model's own numbering when the calls are sequential, and an epoch the
// table issues twice keeps its first number, so the repeat reaches the
// checkers as the C3 violation it is. A model epoch the table never issued
// goes to the table as 1<<63 | epoch, which no table issues (every epoch is
// below 1<<63), so it pins nothing.
//
// With AsIssued set, epochs pass through as the table issued them, in both
// directions: for a driver, whose harness names the epochs itself
// (spec/protocol.md §3), so that an epoch is renamed once on its way to a
// checker, not twice.
type TableEpochs struct {
	AsIssued bool
	names    epochs.Names[uint64]
}

// neverIssued marks a model epoch the table never issued.
const neverIssued = 1 << 63

// Model names the table's epoch e in the model's vocabulary; issued is set
// for an epoch a reserve answered (named if new), clear for one the table
// reported otherwise (an enqueued entry's), which is never named: one the
// table never issued comes back as 1<<63 | e, which the model never issues.
func (t *TableEpochs) Model(e uint64, issued bool) uint64 {
	if t.AsIssued {
		return e
	}
	if issued {
		return t.names.Name(e)
	}
	if m, ok := t.names.Seen(e); ok {
		return m
	}
	return neverIssued | e
}

// Token is tok in the table's vocabulary. Epoch 0 stays 0: a defect the
// table must refuse (C12).
func (t *TableEpochs) Token(tok model.Token) credits.Token {
	if tok.Epoch == 0 || t.AsIssued {
		return credits.Token{Slot: tok.Slot, Epoch: tok.Epoch}
	}
	if e, ok := t.names.Epoch(tok.Epoch); ok {
		return credits.Token{Slot: tok.Slot, Epoch: e}
	}
	return credits.Token{Slot: tok.Slot, Epoch: neverIssued | tok.Epoch}
}

// NewCredits returns an adapter over a new table of f's package (fault.None:
// the real implementation). Enqueue marks come from the inputs' NowMs, so
// the table's own clock never matters.
func NewCredits[P comparable](f fault.Fault) *Credits[P] {
	return &Credits[P]{Table: NewCrTable[P](f)}
}

// NewCreditsAsIssued is NewCredits with the table's epochs passed through
// as issued (TableEpochs.AsIssued): the Go driver's adapter, whose epochs
// the conformance harness names.
func NewCreditsAsIssued[P comparable](f fault.Fault) *Credits[P] {
	s := NewCredits[P](f)
	s.epochs.AsIssued = true
	return s
}

// Holder returns the implementation holder standing for id.
func (s *Credits[P]) Holder(id model.HolderID) *credits.Holder {
	if id == 0 {
		panic("sut: holder 0 is not a holder (defect)")
	}
	if h, ok := s.holders.Load(id); ok {
		return h.(*credits.Holder)
	}
	h, _ := s.holders.LoadOrStore(id, credits.NewHolder())
	return h.(*credits.Holder)
}

// Apply performs in on the table and returns its answer in model form.
func (s *Credits[P]) Apply(in model.CrInput[P]) model.CrOutput[P] {
	var out model.CrOutput[P]
	var tok credits.Token
	if in.Token != (model.Token{}) {
		tok = s.epochs.Token(in.Token)
	}
	switch in.Kind {
	case model.CrReserve:
		t, r := s.Table.Reserve(s.Holder(in.Holder), credits.Class(in.Class))
		out.Result = Result(r)
		if r == credits.OK {
			out.Token = model.Token{Slot: t.Slot, Epoch: s.epochs.Model(t.Epoch, true)}
		}
	case model.CrEnqueue:
		out.Result = Result(s.Table.EnqueueAt(in.NowMs, s.Holder(in.Holder), tok, in.Payload))
	case model.CrTake:
		out.Payload, out.OK = s.Table.Take(tok)
	case model.CrFinish:
		out.OK = s.Table.Finish(tok)
	case model.CrRelease:
		out.OK = s.Table.Release(s.Holder(in.Holder), tok)
	case model.CrSweep:
		out.Count, out.OK = s.Table.Sweep(), true
	case model.CrEnqueued:
		out.Entries, out.OK = Entries(s.Table.Enqueued(), &s.epochs), true
	case model.CrSnapshot:
		out.Snap, out.OK = Snapshot(s.Table.Snapshot()), true
	case model.CrBounds:
		out.Bounds, out.OK = Bounds(credits.TableBounds()), true
	case model.CrExit:
		if s.Exit != nil {
			s.Exit(s.Holder(in.Holder))
		} else {
			s.Holder(in.Holder).Exit()
		}
		out.OK = true
	case model.CrClose:
		s.Table.Close()
		out.OK = true
	default:
		panic(fmt.Sprintf("sut: unknown credit-table operation %d", in.Kind))
	}
	return out
}

// Entries converts a table's enqueued list to the model's, each epoch
// named by t as a seen one (C13).
func Entries[P comparable](es []credits.Entry[P], t *TableEpochs) []model.Entry[P] {
	var out []model.Entry[P]
	for _, e := range es {
		out = append(out, model.Entry[P]{Slot: e.Token.Slot, Epoch: t.Model(e.Token.Epoch, false), MarkedMs: e.MarkedMs, Payload: e.Payload})
	}
	return out
}

// Bounds converts a table's class split to the model's.
func Bounds(b credits.Bounds) model.Bounds {
	return model.Bounds{General: b.General, Internal: b.Internal, Total: b.Total}
}

// Snapshot converts an implementation snapshot to the model's.
func Snapshot(s credits.Snapshot) model.Snapshot {
	c := func(c credits.Counts) model.Counts {
		return model.Counts{Free: c.Free, Reserved: c.Reserved, Enqueued: c.Enqueued, Processing: c.Processing}
	}
	return model.Snapshot{General: c(s.General), Internal: c(s.Internal)}
}

// Result is a table's result in the model's vocabulary. An unknown result
// panics: a defect of the adapter.
func Result(r credits.Result) model.Result {
	switch r {
	case credits.OK:
		return model.OK
	case credits.Exhausted:
		return model.Exhausted
	case credits.Lost:
		return model.Lost
	case credits.NoTable:
		return model.NoTable
	}
	panic(fmt.Sprintf("sut: unknown credits result %d", r))
}
