package tokenbucket

import (
	"context"
	_ "embed" // version 3 of the library
	"errors"
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
	v3 := strings.ReplaceAll(sourceV3, baseLibrary, library)
	if rconn.LibraryVersion(v3) != 3 {
		t.Fatalf("testdata holds version %d", rconn.LibraryVersion(v3))
	}
	if err := rconn.Load(ctx, c, library, v3); err != nil {
		t.Fatal(err)
	}
	m := &migration{t: t, ctx: ctx, c: c, keys: Keys(name), mem: tokenbucket.New[string](),
		lims:  []Limits{{Capacity: 10, RefillPerSecond: 1}, {Capacity: 7.3, RefillPerSecond: 0.37}, {Capacity: 1e300, RefillPerSecond: 3.3}},
		floor: 1_764_900_000_100}
	m.writeV3()

	// This version replaces version 3 and reads its table as it stands.
	tb, err := NewFromClient(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range m.written {
		m.overV3(tb, b)
	}
	m.underV3Floor(tb)
	// A reclaim over both formats forgets what the in-process one forgets.
	for _, l := range m.lims {
		at := int64(1_764_900_000_000 + 3_600_000)
		wn, _ := m.mem.ReclaimAt(at, l)
		if gn, err := tb.ReclaimAt(ctx, at, l); err != nil || gn != wn {
			t.Fatalf("reclaim %+v over both formats: %d %v, want %d", l, gn, err, wn)
		}
	}

	// Version 3 again after a FUNCTION FLUSH (a process of version 3 still
	// running): the data set's mark of this version refuses to load it;
	// and loaded anyway (the mark deleted, as an operator downgrading on
	// purpose would), it refuses a bucket in this format rather than
	// misread it.
	if err := c.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rconn.Load(ctx, c, library, v3); !errors.Is(err, rconn.ErrLibraryVersion) {
		t.Fatalf("version 3 loaded after FUNCTION FLUSH over version %d's mark: %v", rconn.LibraryVersion(source()), err)
	}
	if err := c.Del(ctx, rconn.VersionMark(library)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rconn.Load(ctx, c, library, v3); err != nil {
		t.Fatal(err)
	}
	m.v3Refuses()
}

// migration is TestMigrationFromV3's table: its client and keys, the
// in-process table that had the same history, and the buckets version 3
// wrote.
type migration struct {
	t       *testing.T
	ctx     context.Context
	c       *goredis.Client
	keys    []string
	mem     *tokenbucket.Table[string]
	lims    []Limits
	floor   int64 // version 3's floor, from its reclaim
	written []v3Bucket
}

// v3Bucket is a bucket version 3 wrote: its key, limits and last clock.
type v3Bucket struct {
	key string
	lim Limits
	now int64
}

// takeV3 is version 3's take, its answer parsed (false: refused).
func (m *migration) takeV3(now int64, key string, l Limits, cost float64) (float64, bool) {
	m.t.Helper()
	f := strconv.FormatFloat
	res, err := m.c.FCall(m.ctx, library+"_take_v3", m.keys, key,
		f(l.Capacity, 'g', -1, 64), f(l.RefillPerSecond, 'g', -1, 64), f(cost, 'g', -1, 64), strconv.FormatInt(now, 10)).Text()
	if err == goredis.Nil {
		return 0, false
	}
	x, perr := strconv.ParseFloat(res, 64)
	if err != nil || perr != nil {
		m.t.Fatalf("version 3 take: %q, %v", res, err)
	}
	return x, true
}

// writeV3 has version 3 write buckets at clocks across int64's range, each
// take checked against the in-process table, then reclaim to set its
// floor.
func (m *migration) writeV3() {
	t := m.t
	clocks := []int64{1_764_900_000_000, math.MinInt64 + 1, -1, 1<<53 + 1, math.MaxInt64 - 5}
	for i, now := range clocks {
		for j, l := range m.lims {
			key := "k" + strconv.Itoa(i) + "." + strconv.Itoa(j)
			for n := int64(0); n < 3; n++ {
				wr, wok, _ := m.mem.TakeAt(now+n*300, key, l, 2.9)
				if gr, gok := m.takeV3(now+n*300, key, l, 2.9); gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
					t.Fatalf("version 3 take %s: %v %v, want %v %v", key, gr, gok, wr, wok)
				}
			}
			m.written = append(m.written, v3Bucket{key, l, now + 600})
		}
	}
	gn, err := m.c.FCall(m.ctx, library+"_reclaim_v3", m.keys, "1e+300", "1e-300", strconv.FormatInt(m.floor, 10)).Int()
	if wn, _ := m.mem.ReclaimAt(m.floor, Limits{Capacity: 1e300, RefillPerSecond: 1e-300}); err != nil || gn != wn {
		t.Fatalf("version 3's reclaim forgot %d (%v), want %d", gn, err, wn)
	}
	if got, err := m.c.Get(m.ctx, m.keys[1]).Result(); err != nil || got != strconv.FormatInt(m.floor, 10) {
		t.Fatalf("version 3's floor: %q, %v", got, err)
	}
}

// overV3 checks this version's answers over bucket b as version 3 stored
// it (T3, bit for bit): peek, retry_after, and admit or take; a take
// rewrites the bucket in this version's format.
func (m *migration) overV3(tb *Table, b v3Bucket) {
	t, ctx := m.t, m.ctx
	later := b.now + 1234
	old, _ := m.c.HGet(ctx, m.keys[0], b.key).Result()
	if len(old) == 17 && old[0] == bucketTag {
		t.Fatalf("%s was stored by version 3 in this version's format: %q", b.key, old)
	}
	wp, _ := m.mem.PeekAt(later, b.key, b.lim)
	if gp, err := tb.PeekAt(ctx, later, b.key, b.lim); err != nil || math.Float64bits(gp) != math.Float64bits(wp) {
		t.Fatalf("peek %s over version 3's bucket: %v %v, want %v", b.key, gp, err, wp)
	}
	ww, _ := m.mem.RetryAfterAt(later, b.key, b.lim, b.lim.Capacity)
	if gw, err := tb.RetryAfterAt(ctx, later, b.key, b.lim, b.lim.Capacity); err != nil || gw != ww {
		t.Fatalf("retry_after %s over version 3's bucket: %v %v, want %v", b.key, gw, err, ww)
	}
	if b.key[len(b.key)-1] == '2' { // a refusal's wait, from version 3's bucket
		wd, _ := m.mem.AdmitAt(later, b.key, b.lim, b.lim.Capacity)
		if gd, err := tb.AdmitAt(ctx, later, b.key, b.lim, b.lim.Capacity); err != nil || gd != wd {
			t.Fatalf("admit %s over version 3's bucket: %+v %v, want %+v", b.key, gd, err, wd)
		}
		return // left in version 3's format for the reclaim
	}
	wr, wok, _ := m.mem.TakeAt(later, b.key, b.lim, 1.1)
	if gr, gok, err := tb.TakeAt(ctx, later, b.key, b.lim, 1.1); err != nil || gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
		t.Fatalf("take %s over version 3's bucket: %v %v %v, want %v %v", b.key, gr, gok, err, wr, wok)
	}
	if now, _ := m.c.HGet(ctx, m.keys[0], b.key).Result(); wok && (len(now) != 17 || now[0] != bucketTag) {
		t.Fatalf("%s after a take: %q, not in this version's format", b.key, now)
	}
}

// underV3Floor: T12 over version 3's floor: a new key taken before the
// floor is stamped at the floor, and so refills nothing until the clock
// passes it.
func (m *migration) underV3Floor(tb *Table) {
	t, ctx, l := m.t, m.ctx, m.lims[1]
	for _, now := range []int64{m.floor - 5000, m.floor + 1} {
		key := "new" + strconv.FormatInt(now, 10)
		for range 2 {
			wr, wok, _ := m.mem.TakeAt(now, key, l, 3)
			if gr, gok, err := tb.TakeAt(ctx, now, key, l, 3); err != nil || gok != wok || math.Float64bits(gr) != math.Float64bits(wr) {
				t.Fatalf("take %s under version 3's floor: %v %v %v, want %v %v", key, gr, gok, err, wr, wok)
			}
		}
		ws, _ := m.mem.PeekAt(m.floor+2000, key, l)
		if gs, err := tb.PeekAt(ctx, m.floor+2000, key, l); err != nil || math.Float64bits(gs) != math.Float64bits(ws) {
			t.Fatalf("peek %s after version 3's floor: %v %v, want %v", key, gs, err, ws)
		}
	}
}

// v3Refuses: version 3, loaded again, refuses a take from a bucket in this
// version's format and leaves it as it was.
func (m *migration) v3Refuses() {
	t, ctx := m.t, m.ctx
	for _, b := range m.written {
		v, err := m.c.HGet(ctx, m.keys[0], b.key).Result()
		if err != nil || len(v) != 17 {
			continue
		}
		if _, err := m.c.FCall(ctx, library+"_take_v3", m.keys, b.key, "10", "1", "1", "0").Result(); err == nil {
			t.Fatalf("version 3 took from %s, stored in version 4's format", b.key)
		}
		if after, _ := m.c.HGet(ctx, m.keys[0], b.key).Result(); after != v {
			t.Fatalf("version 3's refused take rewrote %s", b.key)
		}
		return
	}
	t.Fatal("no bucket in this version's format was left to try version 3 on")
}
