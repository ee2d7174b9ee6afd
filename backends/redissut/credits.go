package redissut

import (
	"context"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/credits"
	rcredits "github.com/tollgate/tollgate/impl/redis/credits"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// redisCreditsTable is the method set of *impl/redis/credits.Table that
// Credits uses. Every mutant of impl/redis/credits has it too (a copy
// of the package, whose value types are impl/credits's).
type redisCreditsTable interface {
	RenewAt(ctx context.Context, nowMs int64, h *rcredits.Holder, ttlMs int64) (rcredits.Result, error)
	Exit(ctx context.Context, h *rcredits.Holder) error
	Reserve(ctx context.Context, h *rcredits.Holder, c rcredits.Class) (rcredits.Token, rcredits.Result, error)
	EnqueueAt(ctx context.Context, nowMs int64, h *rcredits.Holder, tok rcredits.Token, payload string) (rcredits.Result, error)
	Take(ctx context.Context, tok rcredits.Token) (string, bool, error)
	Finish(ctx context.Context, tok rcredits.Token) (bool, error)
	Release(ctx context.Context, h *rcredits.Holder, tok rcredits.Token) (bool, error)
	SweepAt(ctx context.Context, nowMs int64) (int, error)
	Enqueued(ctx context.Context) ([]rcredits.Entry, error)
	Snapshot(ctx context.Context) (rcredits.Snapshot, error)
	Destroy(ctx context.Context) error
	Destroyed(ctx context.Context) (bool, error)
	Close() error
}

var _ redisCreditsTable = (*rcredits.Table)(nil)

// Credits applies model credit-table inputs to a Redis credit table
// (impl/redis/credits, or a mutant of it), as sut.Credits does to an
// in-process one, with the same naming of epochs (sut.TableEpochs: the n-th
// distinct epoch the table issues is model epoch n; a model epoch it never
// issued goes to the table as 1<<63 | epoch, which pins nothing), or the
// table's own epochs for the driver (DriverTables).
//
// Each model holder ID maps to a random holder created on first use, whose
// lease is renewed then for rcredits.MaxLeaseMs from the current time (so
// no SweepAt clock the table accepts expires it within an hour: in the
// model only an exit makes a holder sweepable). A model exit drops the lease (Exit), a sweep is SweepAt at
// the input's NowMs. A holder the model has exited is never renewed again,
// even if it goes on acting (as the model lets it).
//
// Apply returns the table's transport errors unchanged (they wrap
// rcredits.ErrUnknown or ErrNotSent); the output is then meaningless.
// Credits is safe for concurrent use.
type Credits struct {
	table redisCreditsTable

	holders sync.Map // model.HolderID → *redisHolder
	epochs  sut.TableEpochs
}

type redisHolder struct {
	h      *rcredits.Holder
	mu     sync.Mutex
	leased bool // renewed once, which lasts
	exited bool // the model exited it: never renewed again
}

// NewCredits returns an adapter over the credit table called name on
// c's server, of f's package (fault.None: the real implementation;
// otherwise a fault of impl/redis/credits). The table is built by its
// package's New from a copy of c's options, so it has a client of its own,
// made the way that package makes it; c itself is not used for calls.
// Close closes the table's client; the table stays on the server. c may be
// a *goredis.ClusterClient: the table is then built by NewCluster.
func NewCredits(f fault.Fault, c goredis.UniversalClient, name string) (*Credits, error) {
	if f != fault.None && (!f.Redis() || !f.Credits()) {
		return nil, fmt.Errorf("redissut: %v is not a fault of the Redis credit table", f)
	}
	var t redisCreditsTable
	var err error
	switch c := c.(type) {
	case *goredis.Client:
		t, err = newRedisCredits(context.Background(), f, optionsOf(c), name)
	case *goredis.ClusterClient:
		t, err = newRedisCreditsCluster(context.Background(), f, clusterOptionsOf(c), name)
	default:
		return nil, fmt.Errorf("redissut: a %T is not supported", c)
	}
	if err != nil {
		return nil, err
	}
	return &Credits{table: t}, nil
}

// Close closes the table's client. The table stays on the server, live
// (a model close is the input CrClose).
func (s *Credits) Close() error { return s.table.Close() }

// holder returns the holder standing for id, renewing its lease on first
// use unless the model exited it.
func (s *Credits) holder(ctx context.Context, id model.HolderID) (*rcredits.Holder, error) {
	if id == 0 {
		panic("redissut: holder 0 is not a holder (defect)")
	}
	v, ok := s.holders.Load(id)
	if !ok {
		v, _ = s.holders.LoadOrStore(id, &redisHolder{h: rcredits.NewHolder()})
	}
	rh := v.(*redisHolder)
	rh.mu.Lock()
	defer rh.mu.Unlock()
	if !rh.leased && !rh.exited {
		// The longest lease there is, from now on the server's machine's
		// clock: no sweep the table accepts (at most MaxClockAheadMs ahead
		// of that clock) expires it while a check runs.
		if _, err := s.table.RenewAt(ctx, time.Now().UnixMilli(), rh.h, rcredits.MaxLeaseMs); err != nil {
			return nil, err
		}
		rh.leased = true // NoTable too: a closed table has no leases to keep
	}
	return rh.h, nil
}

// exit drops id's lease for good.
func (s *Credits) exit(ctx context.Context, id model.HolderID) error {
	if id == 0 {
		panic("redissut: holder 0 is not a holder (defect)")
	}
	v, _ := s.holders.LoadOrStore(id, &redisHolder{h: rcredits.NewHolder()})
	rh := v.(*redisHolder)
	rh.mu.Lock()
	defer rh.mu.Unlock()
	rh.exited = true
	return s.table.Exit(ctx, rh.h)
}

// Apply performs in on the table and returns its answer in model form, or
// the table's transport error.
func (s *Credits) Apply(ctx context.Context, in model.CrInput[string]) (model.CrOutput[string], error) {
	var out model.CrOutput[string]
	var tok credits.Token
	if in.Token != (model.Token{}) {
		tok = s.epochs.Token(in.Token)
	}
	var err error
	var h *rcredits.Holder
	switch in.Kind {
	case model.CrReserve, model.CrEnqueue, model.CrRelease:
		if h, err = s.holder(ctx, in.Holder); err != nil {
			return out, err
		}
	}
	switch in.Kind {
	case model.CrReserve:
		var t credits.Token
		var r credits.Result
		t, r, err = s.table.Reserve(ctx, h, credits.Class(in.Class))
		out.Result = sut.Result(r)
		if err == nil && r == credits.OK {
			out.Token = model.Token{Slot: t.Slot, Epoch: s.epochs.Model(t.Epoch, true)}
		}
	case model.CrEnqueue:
		var r credits.Result
		r, err = s.table.EnqueueAt(ctx, in.NowMs, h, tok, in.Payload)
		out.Result = sut.Result(r)
	case model.CrTake:
		out.Payload, out.OK, err = s.table.Take(ctx, tok)
	case model.CrFinish:
		out.OK, err = s.table.Finish(ctx, tok)
	case model.CrRelease:
		out.OK, err = s.table.Release(ctx, h, tok)
	case model.CrSweep:
		out.Count, err = s.table.SweepAt(ctx, in.NowMs)
		out.OK = true
	case model.CrEnqueued:
		var es []rcredits.Entry
		es, err = s.table.Enqueued(ctx)
		out.Entries, out.OK = sut.Entries(es, &s.epochs), true
	case model.CrSnapshot:
		var snap credits.Snapshot
		snap, err = s.table.Snapshot(ctx)
		out.Snap, out.OK = sut.Snapshot(snap), true
	case model.CrBounds:
		out.Bounds, out.OK = sut.Bounds(rcredits.TableBounds()), true
	case model.CrExit:
		err = s.exit(ctx, in.Holder)
		out.OK = true
	case model.CrClose:
		err = s.table.Destroy(ctx)
		out.OK = true
	default:
		panic(fmt.Sprintf("redissut: unknown credit-table operation %d", in.Kind))
	}
	if err != nil {
		return model.CrOutput[string]{}, err
	}
	return out, nil
}
