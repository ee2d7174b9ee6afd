package remote

import (
	"context"
	"fmt"
	"sync"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// CrTable is what Credits uses of a server-backed credit table whose
// holders are H (*impl/redis/credits.Table, an adapter of
// *impl/etcd/credits.Table, or of a mutant of either: a copy of the
// package, whose value types are impl/credits's).
type CrTable[H any] interface {
	Reserve(ctx context.Context, h H, c credits.Class) (credits.Token, credits.Result, error)
	EnqueueAt(ctx context.Context, nowMs int64, h H, tok credits.Token, payload string) (credits.Result, error)
	Take(ctx context.Context, tok credits.Token) (string, bool, error)
	Finish(ctx context.Context, tok credits.Token) (bool, error)
	Release(ctx context.Context, h H, tok credits.Token) (bool, error)
	// Exit drops h's lease.
	Exit(ctx context.Context, h H) error
	// SweepAt sweeps the holders whose leases have expired at nowMs (a
	// table whose server judges the leases itself ignores nowMs).
	SweepAt(ctx context.Context, nowMs int64) (int, error)
	Enqueued(ctx context.Context) ([]credits.Entry[string], error)
	Snapshot(ctx context.Context) (credits.Snapshot, error)
	Destroy(ctx context.Context) error
}

// Credits applies model credit-table inputs to a server-backed credit
// table, as sut.Credits does to an in-process one, with the same naming of
// epochs (sut.TableEpochs: the n-th distinct epoch the table issues is
// model epoch n), or the table's own epochs (PassEpochs) for the conform
// driver.
//
// Each model holder ID maps to a holder of the table granted on first use
// (grant: a holder with a lease longer than any run, so that, as in the
// model, only an exit makes a holder sweepable). A model exit drops its
// lease for good (the table's Exit); a holder the model exited before its
// first use is granted and dropped at once, so that it is dead as the model
// says, and is never granted again. A model sweep is the table's SweepAt at
// the input's NowMs.
//
// Apply returns the table's transport errors unchanged; the output is then
// meaningless. Credits is safe for concurrent use if its table and holders
// are.
type Credits[H any] struct {
	table  CrTable[H]
	grant  func(context.Context) (H, error)
	bounds credits.Bounds
	epochs sut.TableEpochs

	mu      sync.Mutex
	holders map[model.HolderID]*holder[H]
}

// holder is the table's holder standing for a model holder.
type holder[H any] struct {
	mu      sync.Mutex
	h       H
	granted bool
	exited  bool // the model exited it: dead for good
}

// NewCredits returns an adapter over t, whose holders grant makes (what
// differs per backend: a lease the caller renews, or one the cluster
// keeps), and whose bounds (the model input CrBounds) are bounds.
func NewCredits[H any](t CrTable[H], grant func(context.Context) (H, error), bounds credits.Bounds) *Credits[H] {
	return &Credits[H]{table: t, grant: grant, bounds: bounds, holders: map[model.HolderID]*holder[H]{}}
}

// PassEpochs makes the adapter pass the table's epochs through as issued,
// for a harness that names them itself (the conform driver). Call it
// before the first Apply.
func (s *Credits[H]) PassEpochs() { s.epochs.AsIssued = true }

// slot is the record of id's holder, made on first sight.
func (s *Credits[H]) slot(id model.HolderID) *holder[H] {
	if id == 0 {
		panic("remote: holder 0 is not a holder (defect)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.holders[id]
	if h == nil {
		h = &holder[H]{}
		s.holders[id] = h
	}
	return h
}

// holder returns the holder standing for id, granted on first use (and
// dropped at once if the model exited it before). No lock is held while a
// request is out: two first uses at once both grant, the first to finish
// keeps its holder and the other drops its own. (An exploration that runs
// one request at a time, backends/etcdexplore, could not let another
// thread reach the server while one waited on a lock held across a
// request.)
func (s *Credits[H]) holder(ctx context.Context, id model.HolderID) (H, error) {
	h := s.slot(id)
	h.mu.Lock()
	if h.granted {
		g := h.h
		h.mu.Unlock()
		return g, nil
	}
	h.mu.Unlock()
	g, err := s.grant(ctx)
	if err != nil {
		return g, err
	}
	h.mu.Lock()
	if h.granted {
		won := h.h
		h.mu.Unlock()
		return won, s.table.Exit(ctx, g)
	}
	h.h, h.granted = g, true
	exited := h.exited
	h.mu.Unlock()
	if exited {
		if err := s.table.Exit(ctx, g); err != nil {
			return g, err
		}
	}
	return g, nil
}

// exit drops id's lease for good.
func (s *Credits[H]) exit(ctx context.Context, id model.HolderID) error {
	h := s.slot(id)
	h.mu.Lock()
	h.exited = true
	granted, g := h.granted, h.h
	h.mu.Unlock()
	if !granted {
		return nil // dead from its first use on
	}
	return s.table.Exit(ctx, g)
}

// Apply performs in on the table and returns its answer in model form, or
// the table's transport error.
func (s *Credits[H]) Apply(ctx context.Context, in model.CrInput[string]) (model.CrOutput[string], error) {
	var out model.CrOutput[string]
	var tok credits.Token
	if in.Token != (model.Token{}) {
		tok = s.epochs.Token(in.Token)
	}
	var err error
	var h H
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
		var es []credits.Entry[string]
		es, err = s.table.Enqueued(ctx)
		out.Entries, out.OK = sut.Entries(es, &s.epochs), true
	case model.CrSnapshot:
		var snap credits.Snapshot
		snap, err = s.table.Snapshot(ctx)
		out.Snap, out.OK = sut.Snapshot(snap), true
	case model.CrBounds:
		out.Bounds, out.OK = sut.Bounds(s.bounds), true
	case model.CrExit:
		err = s.exit(ctx, in.Holder)
		out.OK = true
	case model.CrClose:
		err = s.table.Destroy(ctx)
		out.OK = true
	default:
		panic(fmt.Sprintf("remote: unknown credit-table operation %d", in.Kind))
	}
	if err != nil {
		return model.CrOutput[string]{}, err
	}
	return out, nil
}
