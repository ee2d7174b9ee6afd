package redissut_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/backends/redissut"
	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	redistokenbucket "github.com/tollgate/tollgate/impl/redis/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/model"
)

func redisClient(t *testing.T) *goredis.Client {
	t.Helper()
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newRedisTB(t *testing.T, f fault.Fault, c *goredis.Client, name string) *redissut.TokenBucket {
	t.Helper()
	s, err := redissut.NewTokenBucket(f, c, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// vectorMismatches runs every token-bucket golden vector of spec/vectors
// through s, each case on an emptied table, and returns the first mismatch
// of each failing case.
func vectorMismatches(t *testing.T, s *redissut.TokenBucket) (cases, steps int, bad []string) {
	t.Helper()
	ctx := context.Background()
	files, err := conform.LoadVectors(filepath.Join("..", "..", "spec", "vectors", conform.VectorFileNames[conform.PrimTokenBucket]))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range files[0].Cases {
		cases++
		if _, err := s.Apply(ctx, model.TBInput[string]{Kind: model.TBResetAll}); err != nil {
			t.Fatal(err)
		}
		for i, st := range v.Steps {
			in, err := conform.DecodeTB(&st.Send)
			if err != nil {
				continue // a request the protocol refuses: nothing reaches a table
			}
			steps++
			out, err := s.Apply(ctx, in)
			if err != nil {
				t.Fatalf("%s step %d: %v", v.Name, i+1, err)
			}
			got := conform.Canonical(st.Send.Op, conform.TBResponse(in, out), nil, nil)
			if got != string(st.Expect) {
				bad = append(bad, fmt.Sprintf("%s step %d (%v): got %s, want %s", v.Name, i+1, in, got, st.Expect))
				break
			}
		}
	}
	return cases, steps, bad
}

// TestRedisVectors: every token-bucket golden vector passes through the
// server bit for bit (T3), and rtb-tostring, whose library formats floats
// with tostring, fails them.
func TestRedisVectors(t *testing.T) {
	build.Need(t)
	c := redisClient(t)
	cases, steps, bad := vectorMismatches(t, newRedisTB(t, fault.None, c, "vectors"))
	if len(bad) > 0 {
		t.Fatalf("%d of %d cases differ:\n%s", len(bad), cases, strings.Join(bad, "\n"))
	}
	t.Logf("%d cases, %d steps through the server", cases, steps)
	_, _, bad = vectorMismatches(t, newRedisTB(t, fault.Named("rtb-tostring"), c, "vectors-tostring"))
	if len(bad) == 0 {
		t.Fatal("rtb-tostring passed every vector")
	}
	t.Logf("rtb-tostring fails %d cases, first: %s", len(bad), bad[0])
}

// skewRun has six goroutines, each with its own connection and a clock
// offset by up to two seconds either way from a shared virtual clock, hammer
// one key with takes of 1 from a bucket of 4 refilling 4 per second
// (spring-cloud-gateway #1688's limits), and follows the committed takes in
// a model.T5Bound. The virtual clock advances 20 ms a take, so a run spans
// some 18 s of it. The bucket is created first, alone, at the oldest clock
// any client will carry, so the bound's t_min is the creating take's clock
// however the goroutines' answers are ordered after it.
func skewRun(t *testing.T, f fault.Fault, c *goredis.Client, name string, seed uint64) model.T5Bound {
	t.Helper()
	const clients, rounds = 6, 150
	offsets := []int64{-2000, -1000, 0, 0, 1000, 2000}
	lim := model.Limits{Capacity: 4, RefillPerSecond: 4}
	ctx := context.Background()
	tables := make([]*redissut.TokenBucket, clients)
	for i := range tables {
		tables[i] = newRedisTB(t, f, c, name)
	}
	var (
		mu    sync.Mutex
		bound model.T5Bound
		ops   atomic.Int64
		wg    sync.WaitGroup
		fail  atomic.Value
	)
	base := int64(1_700_000_000_000)
	take := func(s *redissut.TokenBucket, now int64) error {
		out, err := s.Apply(ctx, model.TBInput[string]{Kind: model.TBTake, Key: "shared", Limits: lim, Cost: 1, NowMs: now})
		if err == nil && out.OK {
			mu.Lock()
			bound.Commit(lim, 1, now)
			mu.Unlock()
		}
		return err
	}
	if _, err := tables[0].Apply(ctx, model.TBInput[string]{Kind: model.TBResetAll}); err != nil {
		t.Fatal(err)
	}
	if err := take(tables[0], base+offsets[0]); err != nil {
		t.Fatal(err)
	}
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			for range rounds {
				// A client reads its clock, is delayed (scheduling, the
				// network), then takes: readings arrive out of order.
				now := base + 20*ops.Add(1) + offsets[(i+r.IntN(2))%clients]
				if err := take(tables[i], now); err != nil {
					fail.Store(err.Error())
					return
				}
			}
		}()
	}
	wg.Wait()
	if msg := fail.Load(); msg != nil {
		t.Fatal(msg)
	}
	return bound
}

// TestRedisSkewedClients: clients whose clocks disagree by up to five
// seconds, hammering one key, are together held to T5's bound, because the
// stored timestamp is max(last, now) on the server (T4); a client behind
// the others gains nothing.
func TestRedisSkewedClients(t *testing.T) {
	c := redisClient(t)
	for seed := range uint64(5) {
		b := skewRun(t, fault.None, c, "skew", seed)
		if b.Exceeded() {
			t.Fatalf("seed %d: T5 broken: %s", seed, b.String())
		}
		if seed == 0 {
			t.Logf("real table: %s", b.String())
		}
	}
}

// TestRedisSkewKillsMutants: the same clients break T5 against a table
// that stores the caller's clock (rtb-timestamp-regress: a client behind
// drags the timestamp back and the others are credited the interval again)
// and one whose take is two round trips (rtb-two-trips: two clients read
// the same tokens and both take them).
func TestRedisSkewKillsMutants(t *testing.T) {
	build.Need(t)
	c := redisClient(t)
	for _, f := range []fault.Fault{fault.Named("rtb-timestamp-regress"), fault.Named("rtb-two-trips")} {
		t.Run(f.String(), func(t *testing.T) {
			start := time.Now()
			for seed := uint64(0); time.Since(start) < 10*time.Second; seed++ {
				if b := skewRun(t, f, c, "skew-"+f.String(), seed); b.Exceeded() {
					t.Logf("killed by seed %d in %v: %s", seed, time.Since(start), b.String())
					return
				}
			}
			t.Fatalf("%v held T5 for 10 s of skewed runs", f)
		})
	}
}

// TestRedisMutantsConstructible: every Redis token-bucket mutant builds
// and answers (rtb-retry-on-timeout needs a timed-out reply to show; its
// client keeps go-redis's retries, which is its bug).
func TestRedisMutantsConstructible(t *testing.T) {
	build.Need(t)
	c := redisClient(t)
	ctx := context.Background()
	for _, f := range fault.AllRedis() {
		if f.Credits() {
			continue
		}
		s := newRedisTB(t, f, c, "build-"+f.String())
		out, err := s.Apply(ctx, model.TBInput[string]{Kind: model.TBTake, Key: "k", Limits: model.Limits{Capacity: 2, RefillPerSecond: 1}, Cost: 1})
		if err != nil || !out.OK || out.Remaining != 1 {
			t.Errorf("%v: %+v %v", f, out, err)
		}
	}
	if c.Options().MaxRetries != 0 {
		t.Fatalf("building the mutants changed the caller's client: MaxRetries %d", c.Options().MaxRetries)
	}
	if _, err := redissut.NewTokenBucket(fault.Named("tb-no-clamp"), c, "x"); err == nil {
		t.Fatal("an in-memory fault was accepted")
	}
}

// TestRedisTimeoutIsUnknown: a take whose reply does not come in time (a
// slow script holds the server past the client's read time-out; the take
// runs after it) reports ErrUnknown, and ran at most once. Built the way
// rtb-retry-on-timeout builds its client, go-redis sends it again on each
// time-out, and every copy runs when the server is free: one call takes
// its cost several times (T1).
//
// Whether a copy reaches the server depends on the pool having an
// established connection at that instant and on the client's timing, which
// a loaded machine disturbs (about one trial in seven beside two CPU-bound
// jobs sent the take once or not at all). So each side runs up to five
// trials, each on a table of its own: the real table must answer ErrUnknown
// and take at most one token in every trial, and must take exactly one in
// some trial (else the take was never sent and the test proved nothing);
// the mutant is caught when any trial takes more than one.
func TestRedisTimeoutIsUnknown(t *testing.T) {
	build.Need(t)
	srv := redisserver.StartT(t)
	ctx := context.Background()
	lim := model.Limits{Capacity: 10, RefillPerSecond: 1e-9}
	taken := func(f fault.Fault, trial int) (float64, error) {
		name := fmt.Sprintf("timeout-%v-%d", f, trial)
		// MinIdleConns and the warm-up below open established connections
		// before the server is held, so that go-redis's retries find some
		// (a new one would time out in its handshake before the command
		// was written, and the copy would never be sent).
		c := rconn.NewClient(&goredis.Options{Addr: srv.Addr, ReadTimeout: 100 * time.Millisecond, MinIdleConns: 6, ClientName: name})
		defer c.Close()
		s := newRedisTB(t, f, c, name)
		admin := rconn.NewClient(&goredis.Options{Addr: srv.Addr, ReadTimeout: 5 * time.Second})
		defer admin.Close()
		if err := admin.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		// Warm-up rounds of 8 peeks at once, until the server counts at
		// least 5 of the table's connections: one for each of go-redis's 3
		// retries, and some to spare.
		for deadline := time.Now().Add(5 * time.Second); ; {
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _ = s.Apply(ctx, model.TBInput[string]{Kind: model.TBPeek, Key: "warm", Limits: lim})
				}()
			}
			wg.Wait()
			list, err := admin.ClientList(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(list, " name="+name+" "); n >= 5 {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("the table opened %d connections, want 5:\n%s", n, list)
			}
			time.Sleep(5 * time.Millisecond)
		}
		busy := make(chan error, 1)
		go func() {
			// Spins for 600 ms of server time: nothing else runs meanwhile.
			busy <- admin.Eval(ctx, `local t = redis.call('TIME'); local s = t[1] * 1e6 + t[2]
				repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - s > 600000
				return 1`, nil).Err()
		}()
		// Wait until the script holds the server: a PING goes unanswered.
		probe := rconn.NewClient(&goredis.Options{Addr: srv.Addr, ReadTimeout: 20 * time.Millisecond})
		defer probe.Close()
		for deadline := time.Now().Add(5 * time.Second); probe.Ping(ctx).Err() == nil; {
			if time.Now().After(deadline) {
				t.Fatal("the server never got busy")
			}
			time.Sleep(5 * time.Millisecond)
		}
		_, err := s.Apply(ctx, model.TBInput[string]{Kind: model.TBTake, Key: "k", Limits: lim, Cost: 1, NowMs: 0})
		if err := <-busy; err != nil {
			t.Fatal(err)
		}
		out, perr := s.Apply(ctx, model.TBInput[string]{Kind: model.TBPeek, Key: "k", Limits: lim, NowMs: 0})
		if perr != nil {
			t.Fatal(perr)
		}
		return lim.Capacity - out.Tokens, err
	}
	const trials = 5
	sent := false
	for i := 0; i < trials && !sent; i++ {
		n, err := taken(fault.None, i)
		if !errors.Is(err, redistokenbucket.ErrUnknown) || n > 1 {
			t.Fatalf("real table, trial %d: took %v tokens, error %v; want at most 1 and ErrUnknown", i, n, err)
		}
		sent = n == 1
	}
	if !sent {
		t.Fatalf("real table: the take reached the server in none of %d trials", trials)
	}
	for i := 0; ; i++ {
		n, err := taken(fault.Named("rtb-retry-on-timeout"), i)
		t.Logf("rtb-retry-on-timeout, trial %d: one call took %v tokens (error %v)", i, n, err)
		if n > 1 {
			break
		}
		if i == trials-1 {
			t.Fatalf("rtb-retry-on-timeout took at most 1 token for one call in each of %d trials", trials)
		}
	}
}
