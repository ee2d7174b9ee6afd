package tokenbucket

import (
	"context"
	_ "embed" // version 3 of the library
	"math"
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// sourceV3 is version 3 of the library, the last that stored buckets and
// the floor as decimal text ("<tokens> <last_ms>"), as it was released.
//
//go:embed testdata/tokenbucket_v3.lua
var sourceV3 string

// TestMigrationFromV3: a table written by library version 3 (buckets and
// floor in decimal text) is served by this version as it stands, with no
// pass over the data. Loading this version replaces version 3 (an older
// one); then every operation on a bucket version 3 stored answers what
// impl/tokenbucket answers after the same history, bit for bit (T3), a
// key with no bucket starts no earlier than version 3's floor (T12), each
// bucket a take commits is rewritten in this version's format, and a
// reclaim judges both formats. Version 3, loaded again after a FUNCTION
// FLUSH, refuses a bucket in this format instead of misreading it.
func TestMigrationFromV3(t *testing.T) {
	ctx := context.Background()
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	defer c.Close()
	const name = "migrate"
	keys := Keys(name)
	v3 := func() string {
		s := sourceV3
		for _, r := range [][2]string{{baseLibrary, library}} {
			s = strings.ReplaceAll(s, r[0], r[1])
		}
		return s
	}()
	if rconn.LibraryVersion(v3) != 3 {
		t.Fatalf("testdata holds version %d", rconn.LibraryVersion(v3))
	}
	if err := rconn.Load(ctx, c, library, v3); err != nil {
		t.Fatal(err)
	}
	f := strconv.FormatFloat
	takeV3 := func(now int64, key string, l Limits, cost float64) (float64, bool) {
		t.Helper()
		res, err := c.FCall(ctx, library+"_take_v3", keys, key,
			f(l.Capacity, 'g', -1, 64), f(l.RefillPerSecond, 'g', -1, 64), f(cost, 'g', -1, 64), strconv.FormatInt(now, 10)).Text()
		if err == goredis.Nil {
			return 0, false
		}
		x, perr := strconv.ParseFloat(res, 64)
		if err != nil || perr != nil {
			t.Fatalf("version 3 take: %q, %v", res, err)
		}
		return x, true
	}
	mem := tokenbucket.New[string]()
	lims := []Limits{{Capacity: 10, RefillPerSecond: 1}, {Capacity: 7.3, RefillPerSecond: 0.37}, {Capacity: 1e300, RefillPerSecond: 3.3}}
	clocks := []int64{1_764_900_000_000, math.MinInt64 + 1, -1, 1<<53 + 1, math.MaxInt64 - 5}
	type bk struct {
		key string
		lim Limits
		now int64
	}
	var written []bk
	for i, now := range clocks {
		for j, l := range lims {
			key := "k" + strconv.Itoa(i) + "." + strconv.Itoa(j)
			for n := int64(0); n < 3; n++ {
				wr, wok, _ := mem.TakeAt(now+n*300, key, l, 2.9)
				if gr, gok := takeV3(now+n*300, key, l, 2.9); gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
					t.Fatalf("version 3 take %s: %v %v, want %v %v", key, gr, gok, wr, wok)
				}
			}
			written = append(written, bk{key, l, now + 600})
		}
	}
	// Version 3's floor, in decimal, from a reclaim.
	floor := int64(1_764_900_000_100)
	gn, err := c.FCall(ctx, library+"_reclaim_v3", keys, "1e+300", "1e-300", strconv.FormatInt(floor, 10)).Int()
	if wn, _ := mem.ReclaimAt(floor, Limits{Capacity: 1e300, RefillPerSecond: 1e-300}); err != nil || gn != wn {
		t.Fatalf("version 3's reclaim forgot %d (%v), want %d", gn, err, wn)
	}
	if got, err := c.Get(ctx, keys[1]).Result(); err != nil || got != strconv.FormatInt(floor, 10) {
		t.Fatalf("version 3's floor: %q, %v", got, err)
	}

	// This version replaces version 3 and reads its table as it stands.
	tb, err := NewFromClient(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range written {
		later := b.now + 1234
		old, _ := c.HGet(ctx, keys[0], b.key).Result()
		if len(old) == 17 && old[0] == bucketTag {
			t.Fatalf("%s was stored by version 3 in this version's format: %q", b.key, old)
		}
		wp, _ := mem.PeekAt(later, b.key, b.lim)
		if gp, err := tb.PeekAt(ctx, later, b.key, b.lim); err != nil || math.Float64bits(gp) != math.Float64bits(wp) {
			t.Fatalf("peek %s over version 3's bucket: %v %v, want %v", b.key, gp, err, wp)
		}
		ww, _ := mem.RetryAfterAt(later, b.key, b.lim, b.lim.Capacity)
		if gw, err := tb.RetryAfterAt(ctx, later, b.key, b.lim, b.lim.Capacity); err != nil || gw != ww {
			t.Fatalf("retry_after %s over version 3's bucket: %v %v, want %v", b.key, gw, err, ww)
		}
		if b.key[len(b.key)-1] == '2' { // a refusal's wait, from version 3's bucket
			wd, _ := mem.AdmitAt(later, b.key, b.lim, b.lim.Capacity)
			if gd, err := tb.AdmitAt(ctx, later, b.key, b.lim, b.lim.Capacity); err != nil || gd != wd {
				t.Fatalf("admit %s over version 3's bucket: %+v %v, want %+v", b.key, gd, err, wd)
			}
			continue // left in version 3's format for the reclaim below
		}
		wr, wok, _ := mem.TakeAt(later, b.key, b.lim, 1.1)
		if gr, gok, err := tb.TakeAt(ctx, later, b.key, b.lim, 1.1); err != nil || gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
			t.Fatalf("take %s over version 3's bucket: %v %v %v, want %v %v", b.key, gr, gok, err, wr, wok)
		}
		if now, _ := c.HGet(ctx, keys[0], b.key).Result(); wok && (len(now) != 17 || now[0] != bucketTag) {
			t.Fatalf("%s after a take: %q, not in this version's format", b.key, now)
		}
	}
	// T12 over version 3's floor: a new key taken before the floor is
	// stamped at the floor, and so refills nothing until the clock passes
	// it.
	for _, now := range []int64{floor - 5000, floor + 1} {
		key := "new" + strconv.FormatInt(now, 10)
		for range 2 {
			wr, wok, _ := mem.TakeAt(now, key, lims[1], 3)
			if gr, gok, err := tb.TakeAt(ctx, now, key, lims[1], 3); err != nil || gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
				t.Fatalf("take %s under version 3's floor: %v %v %v, want %v %v", key, gr, gok, err, wr, wok)
			}
		}
		ws, _ := mem.PeekAt(floor+2000, key, lims[1])
		if gs, err := tb.PeekAt(ctx, floor+2000, key, lims[1]); err != nil || math.Float64bits(gs) != math.Float64bits(ws) {
			t.Fatalf("peek %s after version 3's floor: %v %v, want %v", key, gs, err, ws)
		}
	}
	// A reclaim over both formats forgets what the in-process one forgets.
	for _, l := range lims {
		at := int64(1_764_900_000_000 + 3_600_000)
		wn, _ := mem.ReclaimAt(at, l)
		if gn, err := tb.ReclaimAt(ctx, at, l); err != nil || gn != wn {
			t.Fatalf("reclaim %+v over both formats: %d %v, want %d", l, gn, err, wn)
		}
	}

	// Version 3 again after a FUNCTION FLUSH (a process of version 3 still
	// running): it refuses a bucket in this format rather than misread it.
	if err := c.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rconn.Load(ctx, c, library, v3); err != nil {
		t.Fatal(err)
	}
	for _, b := range written {
		v, err := c.HGet(ctx, keys[0], b.key).Result()
		if err != nil || len(v) != 17 {
			continue
		}
		if _, err := c.FCall(ctx, library+"_take_v3", keys, b.key, "10", "1", "1", "0").Result(); err == nil {
			t.Fatalf("version 3 took from %s, stored in version 4's format", b.key)
		}
		if after, _ := c.HGet(ctx, keys[0], b.key).Result(); after != v {
			t.Fatalf("version 3's refused take rewrote %s", b.key)
		}
		return
	}
	t.Fatal("no bucket in this version's format was left to try version 3 on")
}
