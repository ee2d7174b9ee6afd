package etcdsut

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	etokenbucket "github.com/tollgate/tollgate/impl/etcd/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
)

// The tests of this file each run a check on the real etcd table, which
// must pass, and on the mutant of impl/etcd the check is there to kill,
// which must fail it: a check that stops catching its mutant fails too.

// etcdClient is a client of the package's shared cluster, made with opts.
func etcdClient(t *testing.T, opts ...grpc.DialOption) *clientv3.Client {
	t.Helper()
	cl := etcdserver.SharedT(t)
	c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second, DialOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// tableName is a name of the test's own for f's table, new on every run
// (the shared cluster keeps the tables of earlier runs).
func tableName(t *testing.T, f fault.Fault) string {
	return fmt.Sprintf("%s-%v-%d", t.Name(), f, time.Now().UnixNano())
}

// killedBy runs check on the real table and on the mutant f at once:
// the real one must pass (check returns nil) and the mutant must not.
func killedBy(t *testing.T, f fault.Fault, check func(f fault.Fault) error) {
	t.Helper()
	var real, mutant error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); real = check(fault.None) }()
	go func() { defer wg.Done(); mutant = check(f) }()
	wg.Wait()
	if real != nil {
		t.Errorf("the real table: %v", real)
	}
	if mutant == nil {
		t.Errorf("the mutant %v passed the check that must kill it", f)
	} else {
		t.Logf("the mutant %v is killed: %v", f, mutant)
	}
}

// TestEtcdSweepSparesRenewedHolder: a holder's liveness is the cluster's
// judgment of its lease (C10). A holder with a ttl of 5 s that renews every
// 500 ms is live after 6 s, past its first ttl, and a sweep then frees
// nothing of it; a holder that exited is swept. Kills
// ecr-lease-by-caller-clock, whose sweep frees the renewing holder's
// reservation once grant time + ttl has passed on the sweeper's clock.
func TestEtcdSweepSparesRenewedHolder(t *testing.T) {
	build.Need(t)
	testlong.Skip(t)
	t.Parallel()
	c := etcdClient(t)
	killedBy(t, fault.Named("ecr-lease-by-caller-clock"), func(f fault.Fault) error {
		ctx := context.Background()
		tab, err := newEtcdCredits(ctx, f, c, tableName(t, f))
		if err != nil {
			return err
		}
		// A ttl of 5 s renewed every 500 ms: a renewal may take 4.5 s
		// on a loaded machine (a CI run's -race tests beside three etcd
		// members) before the real lease ends; the sweep comes 6 s after
		// the grant, past the ttl, where a lease judged by the grant's
		// stamp has ended.
		renewing, err := tab.NewHolder(ctx, 5*time.Second)
		if err != nil {
			return err
		}
		exiting, err := tab.NewHolder(ctx, time.Minute)
		if err != nil {
			return err
		}
		var toks []credits.Token
		for _, h := range []any{renewing, exiting} {
			tok, r, err := tab.Reserve(ctx, h, credits.General)
			if err != nil || r != credits.OK {
				return fmt.Errorf("reserve: %v, %v", r, err)
			}
			toks = append(toks, tok)
		}
		if err := tab.Exit(ctx, exiting); err != nil {
			return err
		}
		for end := time.Now().Add(6 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
			if err := tab.Renew(ctx, renewing); err != nil {
				return fmt.Errorf("renew: %w", err)
			}
		}
		if err := tab.Renew(ctx, renewing); err != nil {
			return fmt.Errorf("renew: %w", err)
		}
		n, err := tab.Sweep(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("a sweep 6 s after the grant, of a holder of ttl 5 s renewed every 500 ms and one that exited, freed %d rows, want 1 (the exited holder's)", n)
		}
		if ok, err := tab.Release(ctx, renewing, toks[0]); err != nil || !ok {
			return fmt.Errorf("the renewing holder's release: %v, %v; its reservation must have stayed", ok, err)
		}
		return nil
	})
}

// loseAnswer is a client interceptor that, once armed, lets the next Txn
// that puts reach the cluster and commit there, then reports its answer
// lost: the error of a call whose connection broke after the request was
// written. The caller's context is still live. (It is not reported as a
// deadline: clientv3's own retry interceptor resends any call that fails
// with DeadlineExceeded or Canceled while the caller's context lives, as
// it does for its per-call timeouts.)
type loseAnswer struct{ armed atomic.Bool }

func (l *loseAnswer) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	txn, ok := req.(*pb.TxnRequest)
	if !ok || method != "/etcdserverpb.KV/Txn" || !puts(txn) || !l.armed.CompareAndSwap(true, false) {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
		return err
	}
	if !reply.(*pb.TxnResponse).Succeeded {
		l.armed.Store(true) // a lost race wrote nothing: lose the next one
		return nil
	}
	return status.Error(codes.Unavailable, "error reading from server: EOF")
}

func puts(txn *pb.TxnRequest) bool {
	for _, op := range txn.Success {
		if op.GetRequestPut() != nil {
			return true
		}
	}
	return false
}

// TestEtcdLostAnswerIsUnknown: a take whose Txn committed but whose answer
// never came reports ErrUnknown and took its cost once (T1: one call, one
// take at most). Kills etb-retry-on-unknown, which reads and commits again
// while the caller waits, taking the cost twice.
func TestEtcdLostAnswerIsUnknown(t *testing.T) {
	build.Need(t)
	t.Parallel()
	lose := &loseAnswer{}
	c := etcdClient(t, grpc.WithChainUnaryInterceptor(lose.intercept))
	var mu sync.Mutex // one lost answer at a time: the interceptor is the client's
	killedBy(t, fault.Named("etb-retry-on-unknown"), func(f fault.Fault) error {
		ctx := context.Background()
		tab, err := newEtcdTokenbucket(f, c, tableName(t, f))
		if err != nil {
			return err
		}
		lim := etokenbucket.Limits{Capacity: 10, RefillPerSecond: 1e-9}
		mu.Lock()
		lose.armed.Store(true)
		_, ok, err := tab.TakeAt(ctx, 1000, "k", lim, 1)
		armed := lose.armed.Swap(false)
		mu.Unlock()
		if armed {
			return fmt.Errorf("the take sent no Txn that puts (%v, %v)", ok, err)
		}
		left, perr := tab.PeekAt(ctx, 1000, "k", lim)
		if perr != nil {
			return perr
		}
		switch {
		case left != 9:
			return fmt.Errorf("one take of cost 1 whose answer was lost (answered %v, %v) left %v of 10 tokens, want 9", ok, err, left)
		case !errors.Is(err, econn.ErrUnknown):
			return fmt.Errorf("a take whose answer was lost answered %v, %v; want an error wrapping ErrUnknown", ok, err)
		}
		return nil
	})
}

// TestEtcdTakeComparesTheBucket: 8 takers of cost 1 at one clock reading
// from a bucket of 100 that never refills are admitted exactly 100 times
// (T1; T2: a lost race is read again, never refused). Kills
// etb-take-no-compare, whose takes overwrite each other.
func TestEtcdTakeComparesTheBucket(t *testing.T) {
	build.Need(t)
	testlong.Skip(t)
	t.Parallel()
	c := etcdClient(t)
	killedBy(t, fault.Named("etb-take-no-compare"), func(f fault.Fault) error {
		ctx := context.Background()
		tab, err := newEtcdTokenbucket(f, c, tableName(t, f))
		if err != nil {
			return err
		}
		lim := etokenbucket.Limits{Capacity: 100, RefillPerSecond: 1e-9}
		var admitted atomic.Int64
		errs := make(chan error, 8)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					_, ok, err := tab.TakeAt(ctx, 1000, "k", lim, 1)
					if err != nil {
						errs <- err
						return
					}
					if ok {
						admitted.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
		if n := admitted.Load(); n != 100 {
			return fmt.Errorf("%d takes of cost 1 admitted from a bucket of 100 that never refills", n)
		}
		return nil
	})
}
