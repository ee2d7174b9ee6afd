package tokenbucket_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/impl/etcd/tokenbucket"
	"github.com/tollgate/tollgate/internal/testlong"
)

// runs numbers the tables, so that a test run again (-count) on the shared
// cluster starts from tables of its own.
var runs atomic.Int64

func table(t *testing.T, name string) *tokenbucket.Table {
	t.Helper()
	cl := etcdserver.SharedT(t)
	c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	tab, err := tokenbucket.NewFromClient(c, fmt.Sprintf("%s-%s-%d", t.Name(), name, runs.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestArgErrors: bad limits and costs are impl/tokenbucket's *ArgError,
// naming the field, and a bad table name is refused; nothing is sent.
func TestArgErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tab := table(t, "t")
	var arg *tokenbucket.ArgError
	if _, _, err := tab.TakeAt(ctx, 0, "k", tokenbucket.Limits{Capacity: 0, RefillPerSecond: 1}, 1); !errors.As(err, &arg) || arg.Field != "capacity" {
		t.Errorf("capacity 0: %v", err)
	}
	if _, _, err := tab.TakeAt(ctx, 0, "k", tokenbucket.Limits{Capacity: 1, RefillPerSecond: 1}, 2); !errors.As(err, &arg) || arg.Field != "cost" {
		t.Errorf("cost over capacity: %v", err)
	}
	for _, name := range []string{"", "a/b", strings.Repeat("n", 257)} {
		if _, err := tokenbucket.NewFromClient(nil, name); err == nil || !strings.Contains(err.Error(), econn.NameRule) {
			t.Errorf("name %q: %v, want the name rule", name, err)
		}
	}
}

// TestStormAdmitsExactlyCapacity: 8 goroutines take 1 token at a time from
// one bucket of 40 at one clock reading (nothing refills): exactly 40 are
// admitted, however many races were lost (T2: a lost race is read again,
// never refused), and the bucket ends empty (T1).
func TestStormAdmitsExactlyCapacity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tab := table(t, "t")
	lim := tokenbucket.Limits{Capacity: 40, RefillPerSecond: 1}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 8 {
				_, ok, err := tab.TakeAt(ctx, 1000, "k", lim, 1)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != 40 {
		t.Fatalf("%d takes admitted from a bucket of 40 that never refills", n)
	}
	if left, err := tab.PeekAt(ctx, 1000, "k", lim); err != nil || left != 0 {
		t.Fatalf("after the storm the bucket holds %v (%v), want 0", left, err)
	}
}

// TestReclaimInBatches: a reclaim of more buckets than one transaction
// may delete forgets every full one, in transactions of at most 127, keeps
// the rest, and raises the floor first: a forgotten key taken with an
// older clock is stamped at the reclaim's (T12).
func TestReclaimInBatches(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	ctx := context.Background()
	tab := table(t, "t")
	lim := tokenbucket.Limits{Capacity: 10, RefillPerSecond: 10}
	for i := range 300 {
		cost := 1.0
		if i%3 == 0 {
			cost = 10 // empty at 1000; refilled only by 2000
		}
		if _, ok, err := tab.TakeAt(ctx, 1000, fmt.Sprintf("k%d", i), lim, cost); err != nil || !ok {
			t.Fatalf("take %d: %v, %v", i, ok, err)
		}
	}
	// At 1100 the cost-1 buckets are full again (one token back in 100 ms),
	// the emptied ones hold 1 token.
	n, err := tab.ReclaimAt(ctx, 1100, lim)
	if err != nil || n != 200 {
		t.Fatalf("reclaim: %d, %v; want the 200 full buckets", n, err)
	}
	if left, _ := tab.PeekAt(ctx, 1100, "k0", lim); left != 1 {
		t.Fatalf("k0 holds %v after the reclaim, want the 1 token it refilled", left)
	}
	// k1 was forgotten: a take at 500 is stamped at the floor, 1100, so a
	// take at 1100 after it finds 9 tokens, not 10.
	if _, ok, err := tab.TakeAt(ctx, 500, "k1", lim, 1); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if left, _, err := tab.TakeAt(ctx, 1100, "k1", lim, 1); err != nil || left != 8 {
		t.Fatalf("k1 after two takes: %v (%v), want 8: the first stamped at the floor", left, err)
	}
}

// rpcCounts counts a client's requests by kind: every read (a Range, or a
// Txn without compares), the linearizable Gets among them, and the Txns
// that write (with compares).
type rpcCounts struct{ reads, gets, writes atomic.Int64 }

func (c *rpcCounts) interceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	switch r := req.(type) {
	case *etcdserverpb.RangeRequest:
		c.reads.Add(1)
		if !r.Serializable {
			c.gets.Add(1)
		}
	case *etcdserverpb.TxnRequest:
		if len(r.Compare) == 0 {
			c.reads.Add(1)
		} else {
			c.writes.Add(1)
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (c *rpcCounts) zero() {
	c.reads.Store(0)
	c.gets.Store(0)
	c.writes.Store(0)
}

// differ reports the counts unless they are reads, gets and writes (a
// negative want is not checked).
func (c *rpcCounts) differ(reads, gets, writes int64) string {
	r, g, w := c.reads.Load(), c.gets.Load(), c.writes.Load()
	if r == reads && (gets < 0 || g == gets) && w == writes {
		return ""
	}
	return fmt.Sprintf("%d reads (%d of them a linearizable Get) and %d Txns that write, want %d (%d) and %d", r, g, w, reads, gets, writes)
}

// TestTakeSkipsTheReadOfAKnownBucket: a Table's take of a key whose bucket
// its own last take wrote is one Txn and no read (spec/etcd.md §1); once
// another client writes the key, the stale view's Txn fails, the take
// decides on the reads the failed Txn returned, and the key's later takes
// read first again. Every answer is the model's.
func TestTakeSkipsTheReadOfAKnownBucket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := etcdserver.SharedT(t)
	var n rpcCounts
	// Both clients talk to one member, which answers a write only once it
	// applied it: its local reads are never stale here, so the counts are
	// exact (a stale local read costs a failed Txn, as a stale view does).
	client := func(opts ...grpc.DialOption) *clientv3.Client {
		c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints()[:1], DialTimeout: 5 * time.Second, DialOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	name := fmt.Sprintf("%s-%d", t.Name(), runs.Add(1))
	tab, err := tokenbucket.NewFromClient(client(grpc.WithChainUnaryInterceptor(n.interceptor)), name)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tokenbucket.NewFromClient(client(), name)
	if err != nil {
		t.Fatal(err)
	}
	lim := tokenbucket.Limits{Capacity: 10, RefillPerSecond: 1}
	// take takes cost from key's bucket through tb, wants the answer
	// (ok, left), and, through tab, the counts.
	take := func(what string, tb *tokenbucket.Table, key string, cost float64, ok bool, left float64, reads, gets, writes int64) {
		t.Helper()
		n.zero()
		l, o, err := tb.TakeAt(ctx, 1000, key, lim, cost)
		if err != nil || o != ok || (ok && l != left) {
			t.Fatalf("%s: %v, %v, %v; want %v with %v left", what, l, o, err, ok, left)
		}
		if d := n.differ(reads, gets, writes); tb == tab && d != "" {
			t.Errorf("%s: %s", what, d)
		}
	}
	take("the first take of the key", tab, "k", 1, true, 9, 1, -1, 1)
	take("a take of the key this table alone writes", tab, "k", 1, true, 8, 0, -1, 1)
	take("the same, again", tab, "k", 1, true, 7, 0, -1, 1)
	take("another client's take", other, "k", 1, true, 6, 0, -1, 0)
	take("a take on the view the other client made stale", tab, "k", 1, true, 5, 0, -1, 2)
	take("a take of the key now shared", tab, "k", 1, true, 4, 1, -1, 1)
	// A refusal is decided only on a read through the leader, and writes
	// nothing: of the shared key, after its local read (2 reads); of a key
	// whose known view would refuse, that view not trusted (1 read). A
	// bucket the view holds is confirmed by one linearizable Get of it alone.
	take("a take of 5 from the shared key's 4 tokens", tab, "k", 5, false, 0, 2, 1, 0)
	take("a take of j's whole bucket", tab, "j", 10, true, 0, 1, -1, 1)
	take("a take from j's bucket, known empty", tab, "j", 1, false, 0, 1, 1, 0)
	// The Get that would confirm a refusal finds the bucket gone (another
	// client reset it): the take reads the bucket and the floor together
	// and takes from a full bucket, its Txn compared on both.
	if err := other.Reset(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	take("a take of j's whole bucket after another client's reset", tab, "j", 10, true, 0, 2, 1, 1)
}
