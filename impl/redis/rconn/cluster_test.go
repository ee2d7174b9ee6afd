package rconn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/credits"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/impl/redis/tokenbucket"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestTablesOnACluster: both tables on one three-primary Redis Cluster
// (node timeout 500 ms), through a reshard and then the failover of a
// primary, which leaves the cluster with one node fewer.
func TestTablesOnACluster(t *testing.T) {
	testlong.Skip(t)
	c := redisserver.StartClusterT(t, 3, 500*time.Millisecond)
	t.Run("FollowAReshard", func(t *testing.T) { tablesFollowAReshard(t, c) })
	t.Run("FollowAFailover", func(t *testing.T) { tablesFollowAFailover(t, c) })
}

// tablesFollowAReshard: both tables on a three-primary Redis Cluster,
// their slots moved to another primary (MIGRATE, a pause before each
// batch) while clients keep calling. Every call must succeed: a MOVED, ASK
// or TRYAGAIN answer ran nothing and is followed (rconn.Call), and nothing
// runs twice: every token a take acknowledged is gone from its bucket, and
// no other, and every reserve → enqueue → take → finish cycle completes,
// leaving every slot free. Redirects must have been met, or the test moved
// nothing under the calls.
func tablesFollowAReshard(t *testing.T, c *redisserver.Cluster) {
	ctx := context.Background()
	opts := &goredis.ClusterOptions{Addrs: c.Addrs()}
	tb, err := tokenbucket.NewCluster(ctx, opts, "reshard-tb")
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	cr, err := credits.NewCluster(ctx, opts, "reshard-cr")
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	l := &reshardLoad{tb: tb, cr: cr, taken: map[string]int{}, stop: make(chan struct{})}
	m0, a0, y0 := rconn.Redirects()

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		key := fmt.Sprintf("k%d", w)
		wg.Go(func() { l.takes(ctx, key) })
		wg.Go(func() { l.creditCycles(ctx) })
	}
	// Move each table's slot to the next primary, then back.
	for _, key := range []string{tokenbucket.Keys("reshard-tb")[0], credits.Keys("reshard-cr")[0]} {
		moveAndBack(t, c, key)
	}
	time.Sleep(50 * time.Millisecond)
	close(l.stop)
	wg.Wait()
	for _, f := range l.failures {
		t.Error(f)
	}
	l.checkAfter(ctx, t)
	m, a, y := rconn.Redirects()
	t.Logf("takes %v; redirects followed: MOVED %d, ASK %d, TRYAGAIN %d", l.taken, m-m0, a-a0, y-y0)
	if m-m0 == 0 || a-a0+y-y0 == 0 {
		t.Errorf("the reshard met the calls with MOVED %d, ASK %d, TRYAGAIN %d: want MOVED and ASK or TRYAGAIN", m-m0, a-a0, y-y0)
	}
}

// reshardLoad is the calls tablesFollowAReshard keeps making on both
// tables, and what they saw.
type reshardLoad struct {
	tb       *tokenbucket.Table
	cr       *credits.Table
	mu       sync.Mutex
	taken    map[string]int // key → acknowledged takes
	failures []string
	stop     chan struct{}
}

// reshardLimits leave every take room: no take may be refused.
var reshardLimits = tokenbucket.Limits{Capacity: 1e6, RefillPerSecond: 1}

// reshardNow is the one clock reading of every call: nothing refills.
const reshardNow = 1000

func (l *reshardLoad) fail(format string, args ...any) {
	l.mu.Lock()
	l.failures = append(l.failures, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// stopped reports whether the load is to stop.
func (l *reshardLoad) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// takes takes one token from key at a time until stopped, by TakeAt and
// AdmitAt in turn (an admit reuses its command from call to call, through
// redirects too), counting the acknowledged takes; every take must
// succeed.
func (l *reshardLoad) takes(ctx context.Context, key string) {
	for i := 0; !l.stopped(); i++ {
		var ok bool
		var err error
		if i%2 == 0 {
			_, ok, err = l.tb.TakeAt(ctx, reshardNow, key, reshardLimits, 1)
		} else {
			d, aerr := l.tb.AdmitAt(ctx, reshardNow, key, reshardLimits, 1)
			ok, err = d.OK, aerr
		}
		if err != nil || !ok {
			l.fail("take %d on %s: %v, %v", i, key, ok, err)
			return
		}
		l.mu.Lock()
		l.taken[key]++
		l.mu.Unlock()
	}
}

// creditCycles runs reserve → enqueue → take → finish cycles of one holder
// until stopped; every call must succeed.
func (l *reshardLoad) creditCycles(ctx context.Context) {
	h := credits.NewHolder()
	for !l.stopped() {
		tok, r, err := l.cr.Reserve(ctx, h, credits.General)
		if err != nil || r != credits.OK {
			l.fail("reserve: %v, %v", r, err)
			return
		}
		if r, err := l.cr.EnqueueAt(ctx, reshardNow, h, tok, "p"); err != nil || r != credits.OK {
			l.fail("enqueue: %v, %v", r, err)
			return
		}
		if p, ok, err := l.cr.Take(ctx, tok); err != nil || !ok || p != "p" {
			l.fail("take: %q, %v, %v", p, ok, err)
			return
		}
		if ok, err := l.cr.Finish(ctx, tok); err != nil || !ok {
			l.fail("finish: %v, %v", ok, err)
			return
		}
	}
}

// checkAfter checks, once the load stopped, that every acknowledged take
// is gone from its bucket, and no other, and that every slot is free.
func (l *reshardLoad) checkAfter(ctx context.Context, t *testing.T) {
	t.Helper()
	for key, n := range l.taken {
		got, err := l.tb.PeekAt(ctx, reshardNow, key, reshardLimits)
		if err != nil {
			t.Fatal(err)
		}
		if want := reshardLimits.Capacity - float64(n); got != want {
			t.Errorf("%s holds %v tokens after %d acknowledged takes, want %v: a take was lost or ran twice", key, got, n, want)
		}
	}
	snap, err := l.cr.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.General.Free != 26 {
		t.Errorf("after every cycle finished the credit table shows %+v, want every general slot free", snap)
	}
}

// moveAndBack moves key's slot from its owner to the next primary, then
// back, a pause of 50 ms before each move.
func moveAndBack(t *testing.T, c *redisserver.Cluster, key string) {
	t.Helper()
	slot, err := c.Primaries[0].KeySlot(key)
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := c.Primaries[0].SlotOwner(slot)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range c.Primaries {
		if p.Addr != owner {
			continue
		}
		next := c.Primaries[(i+1)%len(c.Primaries)]
		time.Sleep(50 * time.Millisecond)
		if err := c.MoveSlot(slot, next, 1, 30*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if err := c.MoveSlot(slot, p, 1, 30*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		return
	}
}

// tablesFollowAFailover: the primary serving both tables' slots is
// killed (kill -9), and the cluster promotes its replica once the others
// have missed it for the node timeout. The tables must answer again soon
// after: a call that finds its node dead (not sent, or unknown) makes the
// client reload its slot map, or it would keep dialing the dead address
// until go-redis's periodic reload (ClusterStateReloadInterval, 60 s by
// default). Meanwhile every failure must be one that says what it is
// (ErrNotSent, ErrUnknown, or the cluster's CLUSTERDOWN reply), never a
// refusal.
func tablesFollowAFailover(t *testing.T, c *redisserver.Cluster) {
	ctx := context.Background()
	opts := &goredis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: 200 * time.Millisecond, ReadTimeout: 250 * time.Millisecond, WriteTimeout: 250 * time.Millisecond}
	// The primary of the bucket's slot is killed; the credit table may
	// live there too (the log says), and must answer either way.
	tb, err := tokenbucket.NewCluster(ctx, opts, "failover-tb")
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	cr, err := credits.NewCluster(ctx, opts, "failover-cr")
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	lim := tokenbucket.Limits{Capacity: 1e6, RefillPerSecond: 1}
	const now = 1000
	if _, _, err := tb.TakeAt(ctx, now, "k", lim, 1); err != nil {
		t.Fatal(err)
	}
	victim := slotPrimary(t, c, tokenbucket.Keys("failover-tb")[0])
	crOnVictim := slotPrimary(t, c, credits.Keys("failover-cr")[0]) == victim
	if _, err := victim.Query("WAIT", "1", "2000"); err != nil {
		t.Fatal(err)
	}
	if err := victim.Crash(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	deadline := killed.Add(20 * time.Second)
	var tbBack, crBack time.Duration
	var failures []error
	for (tbBack == 0 || crBack == 0) && time.Now().Before(deadline) {
		if tbBack == 0 {
			_, ok, err := tb.TakeAt(ctx, now, "k", lim, 1)
			switch {
			case err == nil && ok:
				tbBack = time.Since(killed)
			case err == nil:
				t.Fatalf("a take on a bucket of 1e6 tokens refused during the failover")
			default:
				failures = append(failures, err)
			}
		}
		if crBack == 0 {
			h := credits.NewHolder()
			tok, r, err := cr.Reserve(ctx, h, credits.General)
			switch {
			case err == nil && r == credits.OK:
				if _, err := cr.Release(ctx, h, tok); err != nil {
					failures = append(failures, err)
				}
				crBack = time.Since(killed)
			case err == nil:
				t.Fatalf("a reserve on a table with free slots answered %v during the failover", r)
			default:
				failures = append(failures, err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, err := range failures {
		var reply goredis.Error
		if !errors.Is(err, rconn.ErrNotSent) && !errors.Is(err, rconn.ErrUnknown) && !(errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "CLUSTERDOWN")) {
			t.Errorf("a call during the failover failed with %v: want ErrNotSent, ErrUnknown or CLUSTERDOWN", err)
		}
	}
	t.Logf("node timeout %v; the bucket answered again %v after the kill, the credit table (on the killed primary: %v) %v; %d calls failed meanwhile", c.NodeTimeout, tbBack, crOnVictim, crBack, len(failures))
	if tbBack == 0 || crBack == 0 {
		t.Fatalf("20 s after its primary was killed a table still did not answer (bucket back after %v, credits after %v; 0 = never): the client keeps the dead node in its slot map", tbBack, crBack)
	}
}

// slotPrimary is the primary of c that serves key's slot.
func slotPrimary(t *testing.T, c *redisserver.Cluster, key string) *redisserver.Server {
	t.Helper()
	slot, err := c.Primaries[0].KeySlot(key)
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := c.Primaries[0].SlotOwner(slot)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Primaries {
		if p.Addr == owner {
			return p
		}
	}
	t.Fatalf("slot %d is served by %s, not a primary of the cluster", slot, owner)
	return nil
}

// TestASKTimeoutIsUnknown: a call that follows ASK to the importing node
// and gets no reply there (the node stopped, SIGSTOP) has an unknown
// outcome: the node holds the call and runs it once it continues. Call must
// say so (ErrUnknown), never report the ASK it followed, whose answer means
// "nothing ran": a caller sends such a call again, and a reserve would then
// hold two slots. (The soak of seed 1001 on Redis Cluster lost an enqueue,
// and ran a take, a release and an enqueue twice, this way: go-redis leaves
// a command's earlier error in place when a pipeline fails before its reply,
// and Call reuses its command across attempts.)
func TestASKTimeoutIsUnknown(t *testing.T) {
	c := redisserver.StartClusterT(t, 3, 10*time.Second)
	const name = "ask-timeout-cr"
	ctx := context.Background()
	opts := &goredis.ClusterOptions{Addrs: c.Addrs(), ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond}
	cr, err := credits.NewCluster(ctx, opts, name)
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	from := slotPrimary(t, c, "{"+name+"}")
	var to *redisserver.Server
	for _, p := range c.Primaries {
		if p != from {
			to = p
			break
		}
	}
	slot, err := from.KeySlot("{" + name + "}")
	if err != nil {
		t.Fatal(err)
	}
	fromID, err := from.NodeID()
	if err != nil {
		t.Fatal(err)
	}
	toID, err := to.NodeID()
	if err != nil {
		t.Fatal(err)
	}
	// The slot half moved: every key of the table is on to, the slot still
	// from's, so from answers ASK for the table's calls.
	s := fmt.Sprint(slot)
	host, port, _ := strings.Cut(to.Addr, ":")
	for _, q := range [][]string{
		{"CLUSTER", "SETSLOT", s, "IMPORTING", fromID},
		append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, credits.Keys(name)...),
	} {
		target := to
		if q[0] == "MIGRATE" {
			target = from
		}
		if _, err := target.Query(q...); err != nil {
			t.Fatalf("%v: %v", q, err)
		}
		if q[0] == "CLUSTER" {
			if _, err := from.Query("CLUSTER", "SETSLOT", s, "MIGRATING", toID); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A call through ASK leaves a connection to the importing node in the
	// pool the next ASK uses.
	_, a0, _ := rconn.Redirects()
	if _, err := cr.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, a, _ := rconn.Redirects(); a == a0 {
		t.Fatal("the snapshot met no ASK: the slot is not half moved")
	}

	if err := to.Pause(); err != nil {
		t.Fatal(err)
	}
	callCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, _, rerr := cr.Reserve(callCtx, credits.NewHolder(), credits.General)
	cancel()
	if err := to.Resume(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*redisserver.Server{to, from} {
		if _, err := p.Query("CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
			t.Fatal(err)
		}
	}
	var snap credits.Snapshot
	deadline := time.Now().Add(10 * time.Second)
	for {
		if snap, err = cr.Snapshot(ctx); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	reserved := snap.General.Reserved
	t.Logf("reserve: %v; reserved afterwards: %d", rerr, reserved)
	if !errors.Is(rerr, rconn.ErrUnknown) {
		t.Errorf("the reserve sent to a stopped node was reported %v, not unknown (ErrUnknown); the node ran it afterwards: %d slots reserved", rerr, reserved)
	}
	if reserved > 1 {
		t.Errorf("one reserve reserved %d slots", reserved)
	}
}
