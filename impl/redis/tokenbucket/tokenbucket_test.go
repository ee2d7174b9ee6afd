package tokenbucket

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// newTestTable starts a server and makes a table on it.
func newTestTable(t *testing.T, name string) (*Table, *redisserver.Server) {
	t.Helper()
	srv := redisserver.StartT(t)
	tb, err := New(context.Background(), &goredis.Options{Addr: srv.Addr}, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	return tb, srv
}

var lim = Limits{Capacity: 10, RefillPerSecond: 1}

func TestTakeRefillsAndRefuses(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTestTable(t, "basic")
	drainAndRefill(ctx, t, tb)
	olderClockRefillsNothing(ctx, t, tb)
	resetAndReclaim(ctx, t, tb)
}

// drainAndRefill takes key k's ten tokens at 0, is refused the eleventh,
// and sees 1.5 tokens refilled at 1500 ms, with 500 ms to wait for two.
func drainAndRefill(ctx context.Context, t *testing.T, tb *Table) {
	t.Helper()
	for i := 9; i >= 0; i-- {
		rem, ok, err := tb.TakeAt(ctx, 0, "k", lim, 1)
		if err != nil || !ok || rem != float64(i) {
			t.Fatalf("take %d: %v %v %v", 10-i, rem, ok, err)
		}
	}
	if rem, ok, err := tb.TakeAt(ctx, 0, "k", lim, 1); err != nil || ok || rem != 0 {
		t.Fatalf("take from an empty bucket: %v %v %v", rem, ok, err)
	}
	if got, err := tb.PeekAt(ctx, 1500, "k", lim); err != nil || got != 1.5 {
		t.Fatalf("peek after 1.5 s: %v %v", got, err)
	}
	if w, err := tb.RetryAfterAt(ctx, 1500, "k", lim, 2); err != nil || w != 500 {
		t.Fatalf("retry_after: %v %v", w, err)
	}
}

// olderClockRefillsNothing is T4 after drainAndRefill: an older clock
// refills nothing and does not move the stamp back.
func olderClockRefillsNothing(ctx context.Context, t *testing.T, tb *Table) {
	t.Helper()
	if rem, ok, err := tb.TakeAt(ctx, 1000, "k", lim, 1); err != nil || !ok || rem != 0 {
		t.Fatalf("take at 1000: %v %v %v", rem, ok, err)
	}
	if rem, ok, err := tb.TakeAt(ctx, 500, "k", lim, 0.5); err != nil || ok {
		t.Fatalf("take at 500 after one at 1000: %v %v %v", rem, ok, err)
	}
}

// resetAndReclaim: a reset bucket is full again; a reclaim at 5 raises the
// floor to 5 (T12), so a fresh key's take at 0 is stamped 5, and a reclaim
// forgets that bucket once it is full again.
func resetAndReclaim(ctx context.Context, t *testing.T, tb *Table) {
	t.Helper()
	if err := tb.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got, err := tb.PeekAt(ctx, 0, "k", lim); err != nil || got != 10 {
		t.Fatalf("peek after reset: %v %v", got, err)
	}
	if n, err := tb.ReclaimAt(ctx, 5, lim); err != nil || n != 0 {
		t.Fatalf("reclaim: %v %v", n, err)
	}
	if _, _, err := tb.TakeAt(ctx, 0, "a", lim, 1); err != nil {
		t.Fatal(err)
	}
	// The floor is 5: a take at 0 on a fresh key stamps 5 (T12).
	if w, err := tb.RetryAfterAt(ctx, 0, "a", lim, 10); err != nil || w != 1005 {
		t.Fatalf("retry_after behind the floor: %v %v", w, err)
	}
	if n, err := tb.ReclaimAt(ctx, 1005, lim); err != nil || n != 1 {
		t.Fatalf("reclaim of a full bucket: %v %v", n, err)
	}
	if err := tb.ResetAll(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestArgErrorsSendNothing: invalid arguments are refused with
// impl/tokenbucket's errors, before anything reaches the server (the
// client here points at a closed port).
func TestArgErrorsSendNothing(t *testing.T) {
	ctx := context.Background()
	tb, srv := newTestTable(t, "args")
	srv.Stop()
	mem := tokenbucket.New[string]()
	nan := math.NaN()
	for _, c := range []struct {
		lim  Limits
		cost float64
	}{
		{Limits{Capacity: 0, RefillPerSecond: 1}, 1}, {Limits{Capacity: nan, RefillPerSecond: 1}, 1}, {Limits{Capacity: math.Inf(1), RefillPerSecond: 1}, 1}, {Limits{Capacity: 1, RefillPerSecond: -1}, 1},
		{Limits{Capacity: 1, RefillPerSecond: nan}, 1}, {Limits{Capacity: 1, RefillPerSecond: 1}, 0}, {Limits{Capacity: 1, RefillPerSecond: 1}, nan}, {Limits{Capacity: 1, RefillPerSecond: 1}, 2}, {Limits{Capacity: 1, RefillPerSecond: 1}, math.Inf(1)},
	} {
		_, _, want := mem.TakeAt(0, "k", c.lim, c.cost)
		_, _, got := tb.TakeAt(ctx, 0, "k", c.lim, c.cost)
		var arg *ArgError
		if want == nil || !errors.As(got, &arg) || got.Error() != want.Error() {
			t.Errorf("take %+v cost %v: %v, want %v", c.lim, c.cost, got, want)
		}
		_, want = mem.RetryAfterAt(0, "k", c.lim, c.cost)
		if _, got := tb.RetryAfterAt(ctx, 0, "k", c.lim, c.cost); got == nil || got.Error() != want.Error() {
			t.Errorf("retry_after %+v cost %v: %v, want %v", c.lim, c.cost, got, want)
		}
		if _, want := mem.PeekAt(0, "k", c.lim); want != nil {
			if _, got := tb.PeekAt(ctx, 0, "k", c.lim); got == nil || got.Error() != want.Error() {
				t.Errorf("peek %+v: %v, want %v", c.lim, got, want)
			}
		}
		if _, want := mem.ReclaimAt(0, c.lim); want != nil {
			if _, got := tb.ReclaimAt(ctx, 0, c.lim); got == nil || got.Error() != want.Error() {
				t.Errorf("reclaim %+v: %v, want %v", c.lim, got, want)
			}
		}
	}
	// Valid arguments do go out, and fail in transport: nothing was sent.
	if _, _, err := tb.TakeAt(ctx, 0, "k", lim, 1); !errors.Is(err, ErrNotSent) {
		t.Fatalf("take against a stopped server: %v, want ErrNotSent", err)
	}
}

// TestHostileKeys: keys cross as arguments, never as source, so quotes,
// Lua code, "]]", newlines, NUL bytes and 10 KB keys are keys like any
// other, each its own bucket.
func TestHostileKeys(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTestTable(t, "hostile")
	keys := []string{
		"", " ", `"`, `'`, `\`, "]]", "]=]", "[[", "\n", "\r\n", "\x00", "a\x00b", "\xff\xfe",
		`'); redis.call('FLUSHALL') --`, "]] redis.call('DEL', KEYS[1]) --[[", "{}", "{hostile}", "}{",
		"%s%d%q", "\x1b[2J", strings.Repeat("k", 10<<10), strings.Repeat("\x00]]'\"\n", 2000),
	}
	for i, k := range keys {
		cost := float64(i%9 + 1)
		rem, ok, err := tb.TakeAt(ctx, 0, k, lim, cost)
		if err != nil || !ok || rem != 10-cost {
			t.Fatalf("key %q: %v %v %v", k, rem, ok, err)
		}
	}
	for i, k := range keys {
		cost := float64(i%9 + 1)
		if got, err := tb.PeekAt(ctx, 0, k, lim); err != nil || got != 10-cost {
			t.Fatalf("peek %q: %v %v", k, got, err)
		}
	}
	if err := tb.Reset(ctx, keys[len(keys)-1]); err != nil {
		t.Fatal(err)
	}
	if got, err := tb.PeekAt(ctx, 0, keys[len(keys)-2], lim); err != nil || got != 10-float64((len(keys)-2)%9+1) {
		t.Fatalf("resetting one hostile key touched another: %v %v", got, err)
	}
	if n, err := tb.ReclaimAt(ctx, 10_000, lim); err != nil || n != len(keys)-1 {
		t.Fatalf("reclaim: %v %v, want %d", n, err, len(keys)-1)
	}
}

func TestTableNames(t *testing.T) {
	for _, name := range []string{"", "a{b", "a}b", strings.Repeat("n", 257)} { // the credit table's rule too
		if _, err := New(context.Background(), &goredis.Options{Addr: "127.0.0.1:1"}, name); err == nil || !strings.Contains(err.Error(), "table name") {
			t.Errorf("New(%q): %v", name, err)
		}
	}
}

// TestNewFromClientRefusesRetries: a client that would retry a timed-out
// take is refused.
func TestNewFromClientRefusesRetries(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	if _, err := NewFromClient(context.Background(), c, "x"); err == nil || !strings.Contains(err.Error(), "retries") {
		t.Fatalf("NewFromClient with go-redis's default retries: %v", err)
	}
}

// TestServerChecksBeforeWriting: a caller that calls the functions itself
// with bad arguments, or a bucket corrupted by another writer, gets an
// error reply and no write.
func TestServerChecksBeforeWriting(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTestTable(t, "server")
	c := tb.c
	nums := func(cap, rate, cost float64, now int64) []byte {
		p := pack(now, cap, rate, cost)
		b, _ := p.MarshalBinary()
		return b
	}
	for _, args := range [][]any{
		{"k"},                                      // too few
		{"k", nums(10, 1, 1, 0), "x"},              // too many
		{"k", nums(10, 1, 1, 0)[:31]},              // short
		{"k", append(nums(10, 1, 1, 0), 0)},        // long
		{"k", "10 1 1 0"},                          // version 3's decimals
		{"k", nums(0, 1, 1, 0)},                    // capacity
		{"k", nums(math.Inf(1), 1, 1, 0)},          // capacity
		{"k", nums(math.Copysign(0, -1), 1, 1, 0)}, // capacity
		{"k", nums(10, math.NaN(), 1, 0)},          // rate
		{"k", nums(10, 1, -1, 0)},                  // cost
		{"k", nums(10, 1, 11, 0)},                  // cost > capacity
	} {
		if err := c.FCall(ctx, tb.fn.take, tb.keys, args...).Err(); err == nil || !strings.Contains(err.Error(), "tollgate_tb") {
			t.Errorf("take %q: %v", args, err)
		}
	}
	if n, err := c.Exists(ctx, tb.keys...).Result(); err != nil || n != 0 {
		t.Fatalf("refused calls wrote: %d keys exist (%v)", n, err)
	}
	if _, _, err := tb.TakeAt(ctx, 0, "good", lim, 1); err != nil {
		t.Fatal(err)
	}
	// A stored bucket that is neither format, or this format with tokens
	// no take leaves (NaN, negative, infinite), is refused, not repaired.
	stored := func(tokens float64) string {
		b := binary.LittleEndian.AppendUint64([]byte{bucketTag}, math.Float64bits(tokens))
		return string(binary.LittleEndian.AppendUint64(b, 5))
	}
	for _, v := range []string{stored(math.NaN()), stored(-1), stored(math.Inf(1)), "\x05" + stored(1)[1:], stored(1)[:16], "1.5", "1 x"} {
		if err := c.HSet(ctx, tb.keys[0], "corrupt", v).Err(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tb.TakeAt(ctx, 10, "corrupt", lim, 1); err == nil || errors.Is(err, ErrUnknown) {
			t.Errorf("take from the corrupt bucket %q: %v", v, err)
		}
		if got, err := c.HGet(ctx, tb.keys[0], "corrupt").Result(); err != nil || got != v {
			t.Errorf("the refused take rewrote %q as %q (%v)", v, got, err)
		}
	}
	if err := c.HDel(ctx, tb.keys[0], "corrupt").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.HSet(ctx, tb.keys[0], "bad", "1.5").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.ReclaimAt(ctx, 1_000_000, lim); err == nil || errors.Is(err, ErrUnknown) {
		t.Fatalf("reclaim over a corrupt bucket: %v", err)
	}
	// The reclaim judged everything before writing: no floor, the full
	// bucket kept.
	if n, err := c.Exists(ctx, tb.keys[1]).Result(); err != nil || n != 0 {
		t.Fatalf("the refused reclaim raised the floor (%v)", err)
	}
	if n, err := c.HLen(ctx, tb.keys[0]).Result(); err != nil || n != 2 {
		t.Fatalf("the refused reclaim removed buckets: %d left (%v)", n, err)
	}
}

// TestInt64Clocks: clocks beyond 2^53, and differences beyond it, are exact
// (the model's ElapsedMs is a uint64), on the server as in Go.
func TestInt64Clocks(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTestTable(t, "clocks")
	mem := tokenbucket.New[string]()
	slow := Limits{Capacity: 1e300, RefillPerSecond: 1e-3}
	clocks := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 53, -(1 << 53) - 1, -1, 0, 1, 1 << 53, 1<<53 + 1, 1<<62 + 12345, math.MaxInt64 - 1, math.MaxInt64}
	for i, now := range clocks {
		for _, l := range []Limits{slow, {Capacity: 1e300, RefillPerSecond: 3.3}, {Capacity: 7, RefillPerSecond: 1e-300}} {
			key := string(rune('a' + i%3))
			wr, wok, _ := mem.TakeAt(now, key, l, 1e-3)
			gr, gok, err := tb.TakeAt(ctx, now, key, l, 1e-3)
			if err != nil || gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
				t.Fatalf("take at %d %+v: %v %v %v, want %v %v", now, l, gr, gok, err, wr, wok)
			}
			wp, _ := mem.PeekAt(now+1, key, l)
			if gp, err := tb.PeekAt(ctx, now+1, key, l); err != nil || math.Float64bits(gp) != math.Float64bits(wp) {
				t.Fatalf("peek at %d: %v %v, want %v", now+1, gp, err, wp)
			}
		}
	}
}

// TestAdmitMatchesInProcess: AdmitAt on the server answers what
// impl/tokenbucket's AdmitAt answers on the same calls, refusals' waits
// included (T7), bit for bit; and each refusal costs one call (the
// server's call count grows by one per admit).
func TestAdmitMatchesInProcess(t *testing.T) {
	ctx := context.Background()
	tb, srv := newTestTable(t, "admit")
	local := tokenbucket.New[string]()
	lim := Limits{Capacity: 3, RefillPerSecond: 0.7}
	rdb := goredis.NewClient(&goredis.Options{Addr: srv.Addr})
	defer rdb.Close()
	// calls counts the function calls the server ran (FCALL and FCALL_RO).
	calls := func() int64 {
		info, err := rdb.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, l := range strings.Split(info, "\n") {
			for _, cmd := range []string{"cmdstat_fcall:calls=", "cmdstat_fcall_ro:calls="} {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), cmd); ok {
					c, _, _ := strings.Cut(v, ",")
					k, err := strconv.ParseInt(c, 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					n += k
				}
			}
		}
		return n
	}
	refused := 0
	for i := range 40 {
		now := int64(i * 170 % 900)
		cost := []float64{1, 0.5, 2.5}[i%3]
		before := calls()
		got, err := tb.AdmitAt(ctx, now, "k", lim, cost)
		if err != nil {
			t.Fatal(err)
		}
		if n := calls() - before; n != 1 {
			t.Fatalf("admit %d took %d function calls, want 1", i, n)
		}
		want, _ := local.AdmitAt(now, "k", lim, cost)
		if got != want {
			t.Fatalf("admit %d at %d, cost %v: the server says %+v, impl/tokenbucket %+v", i, now, cost, got, want)
		}
		if !got.OK {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no admit was refused: the test checks no wait")
	}
}

// TestWait: Wait on the server takes at once from a bucket that covers the
// cost, sleeps the refusal's wait otherwise, and fails at once, having taken
// nothing, when the context's deadline comes first or the bucket could
// never cover the cost.
//
// The bucket is emptied by two takes at one reading T of the table's clock
// (milliseconds on the monotonic clock since the test began), so it holds 1
// token no sooner than T+50. Wait can only be admitted at a reading of at
// least T+50, whatever the load: the test asserts on the clock's readings,
// not on how long the Wait took on the real clock (a loaded machine can
// delay the Wait's start past T+50, and then it rightly takes at once).
func TestWait(t *testing.T) {
	ctx := context.Background()
	srv := redisserver.StartT(t)
	base := time.Now()
	clock := func() int64 { return time.Since(base).Milliseconds() }
	tb, err := New(ctx, &goredis.Options{Addr: srv.Addr}, "wait", WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	lim := Limits{Capacity: 2, RefillPerSecond: 20}         // a token each 50 ms
	if _, err := tb.Wait(ctx, "full", lim, 1); err != nil { // a full bucket: at once
		t.Fatal(err)
	}
	emptied := clock()
	for i := range 2 {
		if _, ok, err := tb.TakeAt(ctx, emptied, "w", lim, 1); err != nil || !ok {
			t.Fatalf("take %d of a full bucket of 2: %v %v", i+1, ok, err)
		}
	}
	if _, ok, err := tb.TakeAt(ctx, emptied, "w", lim, 1); err != nil || ok {
		t.Fatalf("third take at the same reading: admitted %v, %v; want refused", ok, err)
	}
	if _, err := tb.Wait(ctx, "w", lim, 1); err != nil {
		t.Fatal(err)
	}
	if end := clock(); end-emptied < 50 {
		t.Errorf("Wait on a bucket empty at %d ms returned at %d ms, before a token could refill (50 ms)", emptied, end)
	}
	slow := Limits{Capacity: 1, RefillPerSecond: 0.001}
	if _, ok, err := tb.TakeAt(ctx, clock(), "slow", slow, 1); err != nil || !ok {
		t.Fatalf("take of a full bucket of 1: %v %v", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := tb.Wait(short, "slow", slow, 1); err == nil {
		t.Fatal("Wait with 1 ms left on a bucket 1000 s from a token succeeded")
	} else if !errors.Is(err, tokenbucket.ErrWouldExceedDeadline) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past the deadline: %v", err)
	}
	if _, err := tb.Wait(ctx, "w", Limits{Capacity: 10, RefillPerSecond: 1}, 11); err == nil {
		t.Fatal("Wait for a cost above capacity succeeded")
	}
}

// TestFunctionNamesVersioned: every function of the library is registered
// under its version's name, so a process of another version never runs
// it (rconn.Call).
func TestFunctionNamesVersioned(t *testing.T) {
	if err := rconn.CheckFunctionNames(source()); err != nil {
		t.Fatal(err)
	}
}

// TestEvictingServerRefused: a server whose maxmemory-policy may evict the
// table's keys is refused, naming the setting (an evicted bucket is a full
// one: T5 broken); noeviction and volatile-* are accepted (the keys have
// no TTL).
func TestEvictingServerRefused(t *testing.T) {
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "noeviction"} {
		if err := c.ConfigSet(ctx, "maxmemory-policy", policy).Err(); err != nil {
			t.Fatal(err)
		}
		tab, err := NewFromClient(ctx, c, "evict")
		evicts := strings.HasPrefix(policy, "allkeys-")
		switch {
		case evicts && (!errors.Is(err, rconn.ErrEvictable) || !strings.Contains(err.Error(), "maxmemory-policy is "+policy)):
			t.Errorf("%s: %v, want ErrEvictable naming maxmemory-policy", policy, err)
		case !evicts && err != nil:
			t.Errorf("%s: %v", policy, err)
		}
		if tab != nil {
			_ = tab.Close()
		}
	}
}

// TestConcurrentTakesKeepTheirArguments: takes and admits from many
// goroutines at once, each on a key and limits of its own, answer what
// impl/tokenbucket answers for the same calls, bit for bit: the argument
// vectors a Table reuses from call to call (callArgs) never carry one
// call's key or numbers into another's.
func TestConcurrentTakesKeepTheirArguments(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTestTable(t, "concurrent")
	const workers, calls = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			mem := tokenbucket.New[string]()
			key := "w" + strconv.Itoa(w)
			l := Limits{Capacity: 3 + float64(w)/7, RefillPerSecond: 0.5 + float64(w)}
			for i := range calls {
				now := int64(1_764_900_000_000 + i*37)
				cost := 0.3 + float64((i+w)%5)/3
				if i%2 == 0 {
					wr, wok, _ := mem.TakeAt(now, key, l, cost)
					gr, gok, err := tb.TakeAt(ctx, now, key, l, cost)
					if err != nil || gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
						errs <- fmt.Errorf("%s take %d: %v %v %v, want %v %v", key, i, gr, gok, err, wr, wok)
						return
					}
					continue
				}
				wd, _ := mem.AdmitAt(now, key, l, cost)
				if gd, err := tb.AdmitAt(ctx, now, key, l, cost); err != nil || gd != wd {
					errs <- fmt.Errorf("%s admit %d: %+v %v, want %+v", key, i, gd, err, wd)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
