package etcdsut

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// DriverTables is the tables of the Go driver (conform.Serve) with
// --backend etcd: the etcd-backed tables (impl/etcd/tokenbucket,
// impl/etcd/credits, through TokenBucket and Credits, which pass the
// table's epochs through as issued) on c's cluster: the protocol's table
// name N is the etcd table named by a prefix random to this driver and N,
// so drivers sharing a cluster never meet, and each call waits at most
// timeout for its answer. A mutant of an etcd table (f) is served for its
// primitive; the other primitive is real. A call that got no answer (econn.ErrUnknown), or
// could not be sent in ten tries 50 ms apart, is answered "unknown" (the
// error is made by conform.OutcomeUnknown).
func DriverTables(c *clientv3.Client, f fault.Fault, timeout time.Duration) conform.Tables {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &tables{c: c, f: f, timeout: timeout, prefix: "driver-" + hex.EncodeToString(b[:]) + "-"}
}

type tables struct {
	c       *clientv3.Client
	f       fault.Fault
	timeout time.Duration
	prefix  string
}

// fault is the fault the tables of a primitive (credits, or the token
// bucket) are built with: f when it is a fault of that etcd table, else
// None.
func (r *tables) fault(credits bool) fault.Fault {
	if r.f != fault.None && r.f.Etcd() && r.f.Credits() == credits {
		return r.f
	}
	return fault.None
}

func (r *tables) TB(name string) (conform.TBTable, error) {
	t, err := NewTokenBucket(r.fault(false), r.c, r.prefix+"tb-"+name)
	if err != nil {
		return nil, err
	}
	return tbTable{t: t, timeout: r.timeout}, nil
}

func (r *tables) Cr(name string) (conform.CrTable, error) {
	t, err := send(r.timeout, func(ctx context.Context) (*Credits, error) {
		return NewCredits(ctx, r.fault(true), r.c, r.prefix+"cr-"+name)
	})
	if err != nil {
		return nil, err
	}
	t.epochs.AsIssued = true // the harness names the driver's epochs itself
	return crTable{t: t, timeout: r.timeout}, nil
}

type tbTable struct {
	t       *TokenBucket
	timeout time.Duration
}

func (r tbTable) Apply(in model.TBInput[string]) (model.TBOutput, error) {
	return send(r.timeout, func(ctx context.Context) (model.TBOutput, error) { return r.t.Apply(ctx, in) })
}

type crTable struct {
	t       *Credits
	timeout time.Duration
}

func (r crTable) Apply(in model.CrInput[string]) (model.CrOutput[string], error) {
	return send(r.timeout, func(ctx context.Context) (model.CrOutput[string], error) { return r.t.Apply(ctx, in) })
}

// send makes one call, sending it again (up to ten times, 50 ms apart)
// while it wrote nothing (econn.ErrNotSent): that is safe. An error that
// leaves the call's outcome unknown (econn.ErrUnknown, or ErrNotSent after
// the last try) is returned through conform.OutcomeUnknown.
func send[Out any](timeout time.Duration, call func(context.Context) (Out, error)) (Out, error) {
	var out Out
	var err error
	for range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		out, err = call(ctx)
		cancel()
		if !errors.Is(err, econn.ErrNotSent) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if errors.Is(err, econn.ErrUnknown) || errors.Is(err, econn.ErrNotSent) {
		return out, conform.OutcomeUnknown(err)
	}
	return out, err
}
