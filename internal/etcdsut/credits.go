// Package etcdsut drives the etcd-backed tables (impl/etcd/credits,
// impl/etcd/tokenbucket) with the model's inputs, as internal/sut drives the
// in-process ones and internal/redissut the Redis ones: the differential
// tests, the conform driver's --backend etcd and tollgate check's etcd
// workloads all go through it.
package etcdsut

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/impl/credits"
	ecredits "github.com/tollgate/tollgate/impl/etcd/credits"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// HolderTTL is the lease every model holder is granted: long enough that no
// lease of a run expires by itself, so that, as in the model, only an exit
// makes a holder sweepable. (The leases die with the cluster, or expire an
// hour after a run that left them.)
const HolderTTL = time.Hour

// Credits applies model credit-table inputs to an etcd credit table, as
// sut.Credits does to an in-process one, with the same naming of epochs
// (sut.TableEpochs).
//
// Each model holder ID maps to a holder made on first use (NewHolder, with
// a lease of HolderTTL). A model exit revokes its lease (Exit); a holder
// the model exited before its first use is made and revoked at once, so
// that it is dead as the model says. A sweep is Sweep; the input's NowMs
// plays no part, since the cluster judges the leases.
//
// Apply returns the table's transport errors unchanged (they wrap
// ecredits.ErrUnknown or ErrNotSent); the output is then meaningless.
// Credits is safe for concurrent use.
type Credits struct {
	table *ecredits.Table

	mu      sync.Mutex
	holders map[model.HolderID]*holder
	epochs  sut.TableEpochs
}

type holder struct {
	mu     sync.Mutex
	h      *ecredits.Holder
	exited bool
}

// NewCredits returns an adapter over the credit table called name, on c
// (which stays the caller's). The table stays in the cluster.
func NewCredits(ctx context.Context, c *clientv3.Client, name string) (*Credits, error) {
	t, err := ecredits.NewFromClient(ctx, c, name)
	if err != nil {
		return nil, err
	}
	return &Credits{table: t, holders: map[model.HolderID]*holder{}}, nil
}

// Table is the table the adapter drives.
func (s *Credits) Table() *ecredits.Table { return s.table }

func (s *Credits) slot(id model.HolderID) *holder {
	if id == 0 {
		panic("etcdsut: holder 0 is not a holder (defect)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.holders[id]
	if h == nil {
		h = &holder{}
		s.holders[id] = h
	}
	return h
}

// holder returns the holder standing for id, made on first use.
func (s *Credits) holder(ctx context.Context, id model.HolderID) (*ecredits.Holder, error) {
	h := s.slot(id)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == nil {
		eh, err := s.table.NewHolder(ctx, HolderTTL)
		if err != nil {
			return nil, err
		}
		h.h = eh
		if h.exited {
			if err := s.table.Exit(ctx, eh); err != nil {
				return nil, err
			}
		}
	}
	return h.h, nil
}

// exit revokes id's lease for good.
func (s *Credits) exit(ctx context.Context, id model.HolderID) error {
	h := s.slot(id)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.exited = true
	if h.h == nil {
		return nil // made dead on first use
	}
	return s.table.Exit(ctx, h.h)
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
	var h *ecredits.Holder
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
		out.Count, err = s.table.Sweep(ctx)
		out.OK = true
	case model.CrEnqueued:
		var es []ecredits.Entry
		es, err = s.table.Enqueued(ctx)
		for _, e := range es {
			out.Entries = append(out.Entries, model.Entry[string]{Slot: e.Token.Slot, Epoch: s.epochs.Model(e.Token.Epoch, false), MarkedMs: e.MarkedMs, Payload: e.Payload})
		}
		out.OK = true
	case model.CrSnapshot:
		var snap credits.Snapshot
		snap, err = s.table.Snapshot(ctx)
		out.Snap, out.OK = sut.Snapshot(snap), true
	case model.CrBounds:
		b := ecredits.TableBounds()
		out.Bounds, out.OK = model.Bounds{General: b.General, Internal: b.Internal, Total: b.Total}, true
	case model.CrExit:
		err = s.exit(ctx, in.Holder)
		out.OK = true
	case model.CrClose:
		err = s.table.Destroy(ctx)
		out.OK = true
	default:
		panic(fmt.Sprintf("etcdsut: unknown credit-table operation %d", in.Kind))
	}
	if err != nil {
		return model.CrOutput[string]{}, err
	}
	return out, nil
}
