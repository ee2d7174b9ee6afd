// Package etcdsut drives the etcd-backed tables (impl/etcd/credits,
// impl/etcd/tokenbucket) with the model's inputs, as internal/sut drives the
// in-process ones and backends/redissut the Redis ones: the differential
// tests, the conform driver's --backend etcd and tollgate check's etcd
// workloads all go through it.
package etcdsut

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/remote"
	"github.com/tollgate/tollgate/impl/credits"
	ecredits "github.com/tollgate/tollgate/impl/etcd/credits"
	"github.com/tollgate/tollgate/internal/fault"
)

// etcdCreditsTable is what Credits uses of a credit table of
// impl/etcd/credits or of a mutant of it (tables_gen.go builds either),
// with the holder erased to any: each mutant, a copy of the package, has a
// Holder type of its own. Its value types are impl/credits's in both.
type etcdCreditsTable interface {
	remote.CrTable[any]
	NewHolder(ctx context.Context, ttl time.Duration) (any, error)
	Renew(ctx context.Context, h any) error
	Sweep(ctx context.Context) (int, error)
}

// etcdCreditsOf is the method set of *impl/etcd/credits.Table, whose
// holder is H; every mutant's table has it with its own *Holder.
type etcdCreditsOf[H any] interface {
	NewHolder(ctx context.Context, ttl time.Duration) (H, error)
	Renew(ctx context.Context, h H) error
	Exit(ctx context.Context, h H) error
	Reserve(ctx context.Context, h H, c credits.Class) (credits.Token, credits.Result, error)
	EnqueueAt(ctx context.Context, nowMs int64, h H, tok credits.Token, payload string) (credits.Result, error)
	Take(ctx context.Context, tok credits.Token) (string, bool, error)
	Finish(ctx context.Context, tok credits.Token) (bool, error)
	Release(ctx context.Context, h H, tok credits.Token) (bool, error)
	Sweep(ctx context.Context) (int, error)
	Enqueued(ctx context.Context) ([]ecredits.Entry, error)
	Snapshot(ctx context.Context) (credits.Snapshot, error)
	Destroy(ctx context.Context) error
}

var _ etcdCreditsOf[*ecredits.Holder] = (*ecredits.Table)(nil)

// etcdCredits erases the holder type of a table t: a holder it is given
// must be one t made (a defect otherwise, which panics).
type etcdCredits[H any] struct{ t etcdCreditsOf[H] }

func (e etcdCredits[H]) NewHolder(ctx context.Context, ttl time.Duration) (any, error) {
	h, err := e.t.NewHolder(ctx, ttl)
	if err != nil {
		return nil, err
	}
	return h, nil
}

func (e etcdCredits[H]) Renew(ctx context.Context, h any) error { return e.t.Renew(ctx, h.(H)) }
func (e etcdCredits[H]) Exit(ctx context.Context, h any) error  { return e.t.Exit(ctx, h.(H)) }

func (e etcdCredits[H]) Reserve(ctx context.Context, h any, c credits.Class) (credits.Token, credits.Result, error) {
	return e.t.Reserve(ctx, h.(H), c)
}

func (e etcdCredits[H]) EnqueueAt(ctx context.Context, nowMs int64, h any, tok credits.Token, payload string) (credits.Result, error) {
	return e.t.EnqueueAt(ctx, nowMs, h.(H), tok, payload)
}

func (e etcdCredits[H]) Take(ctx context.Context, tok credits.Token) (string, bool, error) {
	return e.t.Take(ctx, tok)
}

func (e etcdCredits[H]) Finish(ctx context.Context, tok credits.Token) (bool, error) {
	return e.t.Finish(ctx, tok)
}

func (e etcdCredits[H]) Release(ctx context.Context, h any, tok credits.Token) (bool, error) {
	return e.t.Release(ctx, h.(H), tok)
}

func (e etcdCredits[H]) Sweep(ctx context.Context) (int, error) { return e.t.Sweep(ctx) }

// SweepAt is Sweep: the cluster judges the leases, so nowMs plays no part.
func (e etcdCredits[H]) SweepAt(ctx context.Context, _ int64) (int, error) { return e.t.Sweep(ctx) }

func (e etcdCredits[H]) Enqueued(ctx context.Context) ([]ecredits.Entry, error) {
	return e.t.Enqueued(ctx)
}

func (e etcdCredits[H]) Snapshot(ctx context.Context) (credits.Snapshot, error) {
	return e.t.Snapshot(ctx)
}

func (e etcdCredits[H]) Destroy(ctx context.Context) error { return e.t.Destroy(ctx) }

// HolderTTL is the lease every model holder is granted: long enough that no
// lease of a run expires by itself, so that, as in the model, only an exit
// makes a holder sweepable. (The leases die with the cluster, or expire an
// hour after a run that left them.)
const HolderTTL = time.Hour

// Credits applies model credit-table inputs to an etcd credit table
// through remote.Credits, with the same naming of epochs as sut.Credits
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
	*remote.Credits[any]
	table etcdCreditsTable
}

// NewCredits returns an adapter over the credit table called name, on c
// (which stays the caller's), of f's package (fault.None: the real
// implementation; otherwise a fault of impl/etcd/credits, whose mutant
// package tables_gen.go builds). The table stays in the cluster.
func NewCredits(ctx context.Context, f fault.Fault, c *clientv3.Client, name string) (*Credits, error) {
	if f != fault.None && (!f.Etcd() || !f.Credits()) {
		return nil, fmt.Errorf("etcdsut: %v is not a fault of the etcd credit table", f)
	}
	t, err := newEtcdCredits(ctx, f, c, name)
	if err != nil {
		return nil, err
	}
	grant := func(ctx context.Context) (any, error) { return t.NewHolder(ctx, HolderTTL) }
	return &Credits{Credits: remote.NewCredits(t, grant, ecredits.TableBounds()), table: t}, nil
}

// Table is the table the adapter drives when it is the real one (built
// for fault.None), and nil when it is a mutant's.
func (s *Credits) Table() *ecredits.Table {
	if e, ok := s.table.(etcdCredits[*ecredits.Holder]); ok {
		t, _ := e.t.(*ecredits.Table)
		return t
	}
	return nil
}
