package credits_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/impl/etcd/credits"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/testlong"
)

// client is a client of one 3-member cluster shared by the package's tests
// (each test uses tables of its own names).
func client(t *testing.T) *clientv3.Client {
	t.Helper()
	cl := etcdserver.SharedT(t)
	c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// runs numbers the tables, so that a test run again (-count) on the shared
// cluster starts from tables of its own.
var runs atomic.Int64

func table(t *testing.T, c *clientv3.Client, name string) *credits.Table {
	t.Helper()
	tab, err := credits.NewFromClient(context.Background(), c, fmt.Sprintf("%s-%s-%d", t.Name(), name, runs.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func holder(t *testing.T, tab *credits.Table, ttl time.Duration) *credits.Holder {
	t.Helper()
	h, err := tab.NewHolder(context.Background(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func reserve(t *testing.T, tab *credits.Table, h *credits.Holder) credits.Token {
	t.Helper()
	tok, r, err := tab.Reserve(context.Background(), h, credits.General)
	if err != nil || r != credits.OK {
		t.Fatalf("reserve: %v, %v", r, err)
	}
	return tok
}

// oneReservation is a table of its own on the shared cluster with one
// holder (a lease of a minute) holding one general slot.
func oneReservation(t *testing.T) (*credits.Table, *credits.Holder, credits.Token) {
	t.Helper()
	tab := table(t, client(t), "t")
	h := holder(t, tab, time.Minute)
	return tab, h, reserve(t, tab, h)
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// TestDefectsPanic: C12's defects panic before anything is sent, and a
// holder of another table is one of them (its key lives under the other
// table's prefix, so a sweep here would free its reservations at once).
func TestDefectsPanic(t *testing.T) {
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	tab, other := table(t, c, "a"), table(t, c, "b")
	h, stranger := holder(t, tab, time.Minute), holder(t, other, time.Minute)
	tok := reserve(t, tab, h)
	mustPanic(t, "nil holder", func() { _, _, _ = tab.Reserve(ctx, nil, credits.General) })
	mustPanic(t, "another table's holder", func() { _, _, _ = tab.Reserve(ctx, stranger, credits.General) })
	mustPanic(t, "class 0", func() { _, _, _ = tab.Reserve(ctx, h, credits.Class(0)) })
	mustPanic(t, "slot 0", func() { _, _, _ = tab.Take(ctx, credits.Token{Slot: 0, Epoch: tok.Epoch}) })
	mustPanic(t, "slot 33", func() { _, _ = tab.Finish(ctx, credits.Token{Slot: 33, Epoch: tok.Epoch}) })
	mustPanic(t, "epoch 0", func() { _, _ = tab.Release(ctx, h, credits.Token{Slot: tok.Slot}) })
	s, err := tab.Snapshot(ctx)
	if err != nil || s.General.Reserved != 1 {
		t.Fatalf("after the defects: %+v, %v; want the one reservation", s, err)
	}
}

// TestArgErrors: a bad name, payload or ttl is an *ArgError naming the
// field, and nothing is written.
func TestArgErrors(t *testing.T) {
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	var arg *credits.ArgError
	for _, name := range []string{"", "a/b", strings.Repeat("n", 257)} {
		if _, err := credits.NewFromClient(ctx, c, name); !errors.As(err, &arg) || arg.Field != "name" {
			t.Errorf("name %q: %v, want an *ArgError for name", name, err)
		}
	}
	tab := table(t, c, "t")
	if _, err := tab.NewHolder(ctx, 999*time.Millisecond); !errors.As(err, &arg) || arg.Field != "ttl" {
		t.Errorf("ttl 999ms: %v, want an *ArgError for ttl", err)
	}
	for _, ttl := range []time.Duration{credits.MaxLeaseTTL + time.Second, 1<<63 - 1} {
		if _, err := tab.NewHolder(ctx, ttl); !errors.As(err, &arg) || arg.Field != "ttl" || !strings.Contains(err.Error(), "MaxLeaseTTL") {
			t.Errorf("ttl %v: %v, want an *ArgError for ttl naming MaxLeaseTTL", ttl, err)
		}
	}
	h := holder(t, tab, time.Minute)
	tok := reserve(t, tab, h)
	if _, err := tab.EnqueueAt(ctx, 1, h, tok, strings.Repeat("p", credits.MaxPayload+1)); !errors.As(err, &arg) || arg.Field != "payload" {
		t.Fatalf("payload over MaxPayload: %v, want an *ArgError for payload", err)
	}
	if s, err := tab.Snapshot(ctx); err != nil || s.General.Reserved != 1 || s.General.Enqueued != 0 {
		t.Fatalf("after the refused enqueue: %+v, %v; want the row still reserved", s, err)
	}
	if r, err := tab.EnqueueAt(ctx, 1, h, tok, strings.Repeat("p", credits.MaxPayload)); err != nil || r != credits.OK {
		t.Fatalf("payload of MaxPayload bytes: %v, %v", r, err)
	}
}

// TestSweepJudgedByTheCluster: a holder's liveness is its lease, kept and
// expired by the cluster (C10): a reservation whose holder never renews is
// swept once the lease has run out, one whose holder renews is not, however
// long past its first ttl, and an exit makes it sweepable at once.
func TestSweepJudgedByTheCluster(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	c := client(t)
	ctx := context.Background()
	tab := table(t, c, "t")
	silent, renewing, exiting := holder(t, tab, time.Second), holder(t, tab, 2*time.Second), holder(t, tab, time.Minute)
	reserve(t, tab, silent)
	kept := reserve(t, tab, renewing)
	reserve(t, tab, exiting)
	if n, err := tab.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("sweep with every holder live: %d, %v", n, err)
	}
	if err := tab.Exit(ctx, exiting); err != nil {
		t.Fatal(err)
	}
	if n, err := tab.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep after an exit: %d, %v; want 1", n, err)
	}
	// The silent holder's lease (1 s, raised by etcd to its minimum if
	// that is more) runs out; the renewing one is renewed every 400 ms
	// for 4 s, twice its ttl.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(400 * time.Millisecond) {
		if err := tab.Renew(ctx, renewing); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tab.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep after the silent holder's lease ran out: %d, %v; want 1", n, err)
	}
	if ok, err := tab.Release(ctx, renewing, kept); err != nil || !ok {
		t.Fatalf("the renewing holder's release: %v, %v; its reservation must have stayed", ok, err)
	}
	if err := tab.Renew(ctx, silent); !errors.Is(err, credits.ErrHolderGone) {
		t.Fatalf("renewing an expired holder: %v, want ErrHolderGone", err)
	}
}

// TestRevokedLeaseIsSwept: spec/etcd.md §4a's trust boundary as it
// stands. Any client of the cluster, Table.Client() among them, can revoke
// a live holder's lease with no holder id (etcd does not scope leases to a
// prefix): the next sweep frees that holder's reservation, its enqueue
// answers lost and its renewal ErrHolderGone. Nothing keeps a reservation
// from a client the cluster trusts; the spec says so.
func TestRevokedLeaseIsSwept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tab, live, tok := oneReservation(t)
	var lease clientv3.LeaseID
	resp, err := tab.Client().Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range resp.Leases {
		if l.ID == live.Lease() {
			lease = l.ID
		}
	}
	if lease == 0 {
		t.Fatal("the holder's lease is not among those any client of the cluster lists")
	}
	if _, err := tab.Client().Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if n, err := tab.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep after another client revoked a live holder's lease: %d, %v; want 1", n, err)
	}
	if r, err := tab.EnqueueAt(ctx, 1, live, tok, "after the revoke"); err != nil || r != credits.Lost {
		t.Fatalf("the swept holder's enqueue: %v, %v; want lost", r, err)
	}
	if err := tab.Renew(ctx, live); !errors.Is(err, credits.ErrHolderGone) {
		t.Fatalf("renewing the revoked holder: %v, want ErrHolderGone", err)
	}
}

// TestDestroyIsForGood: after Destroy every client of the name sees a dead
// table (C11), and New on the name fails with ErrDestroyed.
func TestDestroyIsForGood(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tab, h, tok := oneReservation(t)
	c := tab.Client()
	if err := tab.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, r, err := tab.Reserve(ctx, h, credits.General); err != nil || r != credits.NoTable {
		t.Fatalf("reserve after destroy: %v, %v", r, err)
	}
	if r, err := tab.EnqueueAt(ctx, 1, h, tok, "p"); err != nil || r != credits.NoTable {
		t.Fatalf("enqueue after destroy: %v, %v", r, err)
	}
	if s, err := tab.Snapshot(ctx); err != nil || !s.Closed || s.General.Free != 0 {
		t.Fatalf("snapshot after destroy: %+v, %v", s, err)
	}
	if _, err := credits.NewFromClient(ctx, c, tab.Name()); !errors.Is(err, credits.ErrDestroyed) {
		t.Fatalf("New on a destroyed name: %v, want ErrDestroyed", err)
	}
}
