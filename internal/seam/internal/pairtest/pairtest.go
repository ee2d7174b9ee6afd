// Package pairtest is the test suite every 128-bit pair of the seam must
// pass: internal/seam's Pair (in each of its builds) and the hooked twin's.
// The concurrent tests look for the failures a broken pair produces: a torn
// read (the halves of two different values), a lost update (two
// compare-and-swaps that both succeed from one value), a compare-and-swap that
// compares one half only, a half-word operation that disturbs the other half,
// and the wrong words chosen at one of the two 16-byte parities. They need
// GOMAXPROCS > 1 to catch a race in the act; with one P they still check every
// result.
package pairtest

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// Ops is the method set of a pair.
type Ops interface {
	Load() (lo, hi uint64)
	LoadLo() uint64
	LoadHi() uint64
	Store(lo, hi uint64)
	CompareAndSwap(oldLo, oldHi, newLo, newHi uint64) (swapped bool)
	CompareAndSwapLo(old, new uint64) (swapped bool)
}

// Sizes of the concurrent tests: enough contention to tear a non-atomic
// pair within one run on two cores, little enough for -count=200, -race and
// emulation.
const (
	writers   = 4
	readers   = 2
	perWriter = 20000
)

// Run runs every test of the suite on the pair type P.
func Run[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	t.Run("Zero", Zero[P, PT])
	t.Run("Sequential", Sequential[P, PT])
	t.Run("OneHalfDiffers", OneHalfDiffers[P, PT])
	t.Run("Alignment", Alignment[P, PT])
	t.Run("TornRead", TornRead[P, PT])
	t.Run("TornStore", TornStore[P, PT])
	t.Run("LoRace", LoRace[P, PT])
	t.Run("NoSpuriousFailure", NoSpuriousFailure[P, PT])
	t.Run("LostUpdate", LostUpdate[P, PT])
	t.Run("Publishes", Publishes[P, PT])
}

// check fails t unless p holds (lo, hi), by Load, LoadLo and LoadHi.
func check(t *testing.T, what string, p Ops, lo, hi uint64) {
	t.Helper()
	if gl, gh := p.Load(); gl != lo || gh != hi {
		t.Fatalf("%s: Load = (%#x, %#x), want (%#x, %#x)", what, gl, gh, lo, hi)
	}
	if gl := p.LoadLo(); gl != lo {
		t.Fatalf("%s: LoadLo = %#x, want %#x", what, gl, lo)
	}
	if gh := p.LoadHi(); gh != hi {
		t.Fatalf("%s: LoadHi = %#x, want %#x", what, gh, hi)
	}
}

// Zero: the zero value is (0, 0), and compares as (0, 0).
func Zero[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	p := PT(new(P))
	check(t, "zero value", p, 0, 0)
	if p.CompareAndSwap(0, 1, 5, 5) || p.CompareAndSwap(1, 0, 5, 5) {
		t.Fatal("the zero value compared equal to a nonzero half")
	}
	if !PT(new(P)).CompareAndSwap(0, 0, 1, 2) {
		t.Fatal("CompareAndSwap(0, 0, …) failed on the zero value")
	}
	if q := PT(new(P)); !q.CompareAndSwapLo(0, 7) {
		t.Fatal("CompareAndSwapLo(0, …) failed on the zero value")
	} else {
		check(t, "CompareAndSwapLo(0, 7) on the zero value", q, 7, 0)
	}
}

// Sequential: each operation's result and effect, with values whose high
// bits are set (a half narrowed to 32 bits or sign-extended shows).
func Sequential[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	p := PT(new(P))
	const a, b, c, d = 1<<63 | 0x0123_4567_89ab_cdef, ^uint64(0), 0xfedc_ba98_7654_3210, 1 << 32
	p.Store(a, b)
	check(t, "Store(a, b)", p, a, b)
	p.Store(b, a)
	check(t, "Store(b, a)", p, b, a)
	if !p.CompareAndSwap(b, a, c, d) {
		t.Fatal("CompareAndSwap from the current value failed")
	}
	check(t, "CompareAndSwap(b, a, c, d)", p, c, d)
	if p.CompareAndSwap(b, a, a, b) {
		t.Fatal("CompareAndSwap from a stale value succeeded")
	}
	check(t, "failed CompareAndSwap", p, c, d)
	if !p.CompareAndSwap(c, d, c, d) {
		t.Fatal("CompareAndSwap of the value for itself failed")
	}
	check(t, "CompareAndSwap(c, d, c, d)", p, c, d)
	if !p.CompareAndSwapLo(c, a) {
		t.Fatal("CompareAndSwapLo from the current lo failed")
	}
	check(t, "CompareAndSwapLo(c, a)", p, a, d)
	if p.CompareAndSwapLo(c, b) {
		t.Fatal("CompareAndSwapLo from a stale lo succeeded")
	}
	check(t, "failed CompareAndSwapLo", p, a, d)
	if p.CompareAndSwapLo(d, b) {
		t.Fatal("CompareAndSwapLo compared against hi")
	}
	check(t, "CompareAndSwapLo(hi, …)", p, a, d)
}

// OneHalfDiffers: a CompareAndSwap whose expected value differs from the
// pair's in one half only must fail and change nothing, for each half and
// for a difference in the lowest and in the highest bit.
func OneHalfDiffers[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	const lo, hi uint64 = 0x1111_2222_3333_4444, 0x5555_6666_7777_8888
	for _, bit := range []uint64{1, 1 << 63} {
		for _, half := range []string{"lo", "hi"} {
			p := PT(new(P))
			p.Store(lo, hi)
			oldLo, oldHi := lo, hi
			if half == "lo" {
				oldLo ^= bit
			} else {
				oldHi ^= bit
			}
			if p.CompareAndSwap(oldLo, oldHi, 1, 2) {
				t.Errorf("CompareAndSwap(%#x, %#x, …) on (%#x, %#x) succeeded: it compared only one half", oldLo, oldHi, lo, hi)
			}
			check(t, fmt.Sprintf("after a CompareAndSwap that differs in %s", half), p, lo, hi)
			if !p.CompareAndSwap(lo, hi, 1, 2) {
				t.Fatalf("CompareAndSwap from the current value failed after one that differed in %s", half)
			}
			check(t, "CompareAndSwap(lo, hi, 1, 2)", p, 1, 2)
		}
	}
}

// The two places a pair can have in a heap struct: offset 0 and offset 8,
// with a word on either side to catch a write outside the pair.
type at0[P any] struct {
	p     P
	after uint64
}

type at8[P any] struct {
	before uint64
	p      P
	after  uint64
}

const sentinel = 0x5e47_1e15_5e47_1e15

// Alignment: pairs at offset 0 and 8 of heap structs, and the elements of a
// slice, at both 16-byte parities of their address (a 24-byte pair
// alternates; the test fails if one parity was never seen), work and touch
// nothing around them.
func Alignment[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	var seen [2]int
	exercise := func(what string, p PT, around ...*uint64) {
		t.Helper()
		seen[uintptr(unsafe.Pointer(p))>>3&1]++
		for _, w := range around {
			*w = sentinel
		}
		check(t, what+" (fresh)", p, 0, 0)
		p.Store(1, ^uint64(1))
		check(t, what+" after Store", p, 1, ^uint64(1))
		if !p.CompareAndSwap(1, ^uint64(1), 2, ^uint64(2)) {
			t.Fatalf("%s: CompareAndSwap failed", what)
		}
		if !p.CompareAndSwapLo(2, 3) {
			t.Fatalf("%s: CompareAndSwapLo failed", what)
		}
		check(t, what+" after the compare-and-swaps", p, 3, ^uint64(2))
		for i, w := range around {
			if *w != sentinel {
				t.Fatalf("%s: the word %d beside the pair is %#x, was %#x: an operation wrote outside the pair", what, i, *w, uint64(sentinel))
			}
		}
	}
	for i := 0; i < 8; i++ {
		s0 := new(at0[P])
		exercise(fmt.Sprintf("pair at offset 0 (%p)", s0), PT(&s0.p), &s0.after)
		s8 := new(at8[P])
		exercise(fmt.Sprintf("pair at offset 8 (%p)", s8), PT(&s8.p), &s8.before, &s8.after)
		ps := make([]P, 3)
		for j := range ps {
			exercise(fmt.Sprintf("slice element %d", j), PT(&ps[j]))
		}
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("pairs at 16-byte parity 0: %d, parity 8: %d; both must be tested", seen[0], seen[1])
	}
}

// TornRead: writers move the pair from (k, ^k) to (k+1, ^(k+1)) by
// compare-and-swap loops; readers check that every Load has hi == ^lo and
// that neither Load nor LoadLo goes backwards.
func TornRead[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	p := PT(new(P))
	p.Store(0, ^uint64(0))
	writer := func(int) string {
		for i := 0; i < perWriter; i++ {
			pace(i)
			for {
				lo, hi := p.Load()
				if hi != ^lo {
					return fmt.Sprintf("writer: torn read (%#x, %#x)", lo, hi)
				}
				if p.CompareAndSwap(lo, hi, lo+1, ^(lo + 1)) {
					break
				}
			}
		}
		return ""
	}
	newReader := func() func() string {
		var last uint64
		return func() string {
			lo, hi := p.Load()
			if hi != ^lo {
				return fmt.Sprintf("reader: torn read (%#x, %#x)", lo, hi)
			}
			if lo < last {
				return fmt.Sprintf("reader: Load went back from %d to %d", last, lo)
			}
			l := p.LoadLo()
			if l < lo {
				return fmt.Sprintf("reader: LoadLo %d after Load %d", l, lo)
			}
			// hi = ^lo only falls: after lo ≥ l, hi ≤ ^l.
			if h := p.LoadHi(); h > ^l {
				return fmt.Sprintf("reader: LoadHi %#x after LoadLo %d (hi of an older pair)", h, l)
			}
			last = l
			return ""
		}
	}
	failures, reads := contend(writers, readers, writer, newReader)
	for _, f := range failures {
		t.Error(f)
	}
	const want = writers * perWriter
	check(t, "after the writers", p, want, ^uint64(want))
	t.Logf("reads per reader: %v", reads)
}

// TornStore: writers Store (k, ^k) for distinct k; readers check hi == ^lo.
func TornStore[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	p := PT(new(P))
	p.Store(0, ^uint64(0))
	writer := func(w int) string {
		for i := 0; i < perWriter; i++ {
			pace(i)
			k := uint64(w)<<32 | uint64(i)
			if w%2 == 1 {
				k = ^k // half the writers store values with the top bits set
			}
			p.Store(k, ^k)
		}
		return ""
	}
	newReader := func() func() string {
		return func() string {
			if lo, hi := p.Load(); hi != ^lo {
				return fmt.Sprintf("torn: Load = (%#x, %#x) while every Store is (k, ^k)", lo, hi)
			}
			return ""
		}
	}
	failures, reads := contend(writers, readers, writer, newReader)
	for _, f := range failures {
		t.Error(f)
	}
	if lo, hi := p.Load(); hi != ^lo {
		t.Errorf("final value (%#x, %#x) is torn", lo, hi)
	}
	t.Logf("reads per reader: %v", reads)
}

// LoRace: a CompareAndSwapLo writer counts lo up while CompareAndSwap
// writers count hi up and leave lo as they found it. Only the first changes
// lo, so its CompareAndSwapLo from the lo it loaded must never fail (a
// failure is spurious: the pair changed, but not lo), and the pair
// operations must never put back a lo they loaded before it changed (which a
// CompareAndSwap comparing hi alone would). No hi increment may be lost to a
// CompareAndSwapLo that wrote hi back. Readers check that neither half goes
// backwards.
func LoRace[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	p := PT(new(P))
	const loIncs = writers * perWriter
	writer := func(w int) string {
		if w == writers { // the lo writer
			for i := uint64(0); i < loIncs; i++ {
				if lo := p.LoadLo(); lo != i {
					return fmt.Sprintf("lo writer: LoadLo = %d, want %d (only it writes lo)", lo, i)
				}
				if !p.CompareAndSwapLo(i, i+1) {
					return fmt.Sprintf("lo writer: CompareAndSwapLo(%d, %d) failed though only it writes lo: a spurious failure", i, i+1)
				}
				pace(int(i))
			}
			return ""
		}
		for i := 0; i < perWriter; i++ {
			pace(i)
			for {
				lo, hi := p.Load()
				if p.CompareAndSwap(lo, hi, lo, hi+1) {
					break
				}
			}
		}
		return ""
	}
	newReader := func() func() string {
		var lastLo, lastHi uint64
		return func() string {
			lo, hi := p.Load()
			if lo < lastLo || hi < lastHi {
				return fmt.Sprintf("reader: (%d, %d) after (%d, %d): a half went backwards", lo, hi, lastLo, lastHi)
			}
			lastLo, lastHi = lo, hi
			return ""
		}
	}
	failures, reads := contend(writers+1, readers, writer, newReader)
	for _, f := range failures {
		t.Error(f)
	}
	check(t, "after the writers", p, loIncs, writers*perWriter)
	t.Logf("reads per reader: %v", reads)
}

// pace yields every few operations of a reader or a writer. Without it the
// goroutines of a test run one time slice at a time, and a writer finishes
// its work within one slice before a reader is scheduled beside it; with it
// the run queue turns over every few microseconds, so on two Ps a reader and
// a writer run side by side most of the time.
func pace(i int) {
	if i%16 == 15 {
		runtime.Gosched()
	}
}

// contend runs readers against writers: the readers start first and the
// writers only once every reader is running, so that they overlap even when
// the writers are quick; the readers stop when the writers are done. Writer w
// and every read return a failure or "" (each reader has its own read
// function, from newReader). contend returns the failures and the number of
// reads each reader made.
func contend(nWriters, nReaders int, writer func(w int) string, newReader func() func() string) (failures []string, reads []int) {
	var running, stop atomic.Int32
	var wg, rg sync.WaitGroup
	errs := make(chan string, nWriters+nReaders)
	reads = make([]int, nReaders)
	for r := 0; r < nReaders; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			read := newReader()
			running.Add(1)
			for stop.Load() == 0 {
				if f := read(); f != "" {
					errs <- f
					return
				}
				reads[r]++
				pace(reads[r])
			}
		}()
	}
	for running.Load() < int32(nReaders) {
		runtime.Gosched()
	}
	for w := 0; w < nWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f := writer(w); f != "" {
				errs <- f
			}
		}()
	}
	wg.Wait()
	stop.Store(1)
	rg.Wait()
	close(errs)
	for e := range errs {
		failures = append(failures, e)
	}
	return failures, reads
}

// NoSpuriousFailure: goroutines swap the pair's value for itself, with
// CompareAndSwap and CompareAndSwapLo, and Store it again, so the pair is
// rewritten all the time but always holds the same value; every
// compare-and-swap must succeed (a pair whose compare-and-swap fails when the
// storage changed but the value did not would fail here).
func NoSpuriousFailure[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	p := PT(new(P))
	const lo, hi = 0xa5a5, 0x5a5a
	p.Store(lo, hi)
	writer := func(w int) string {
		for i := 0; i < perWriter/4; i++ {
			pace(i)
			switch w % 3 {
			case 0:
				if !p.CompareAndSwap(lo, hi, lo, hi) {
					return fmt.Sprintf("CompareAndSwap(%#x, %#x, %#x, %#x) failed while the pair held (%#x, %#x)", lo, hi, lo, hi, lo, hi)
				}
			case 1:
				if !p.CompareAndSwapLo(lo, lo) {
					return fmt.Sprintf("CompareAndSwapLo(%#x, %#x) failed while lo was %#x", lo, lo, lo)
				}
			case 2:
				p.Store(lo, hi)
			}
		}
		return ""
	}
	newReader := func() func() string {
		return func() string {
			if l, h := p.Load(); l != lo || h != hi {
				return fmt.Sprintf("Load = (%#x, %#x) while every write was of (%#x, %#x)", l, h, lo, hi)
			}
			return ""
		}
	}
	failures, _ := contend(6, 1, writer, newReader)
	for _, f := range failures {
		t.Error(f)
	}
}

// LostUpdate: goroutines increment both halves by compare-and-swap loops;
// every increment must land.
func LostUpdate[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	p := PT(new(P))
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				for {
					lo, hi := p.Load()
					if p.CompareAndSwap(lo, hi, lo+1, hi+1) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	const want = writers * perWriter
	if lo, hi := p.Load(); lo != want || hi != want {
		t.Fatalf("after %d×%d increments the pair is (%d, %d), want (%d, %d): lost updates", writers, perWriter, lo, hi, want, want)
	}
}

// Publishes: plain memory written before a write of the pair is visible to
// a goroutine that observed that write, and, under -race, the race detector
// knows it (it reports a race if a pair operation does not tell it of its
// synchronization). Every writing operation is paired with every reading one
// that can observe it.
// publishRounds is how often Publishes runs each pair of operations.
const publishRounds = 2000

func Publishes[P any, PT interface {
	*P
	Ops
}](t *testing.T) {
	writes := map[string]func(p Ops){
		"Store":            func(p Ops) { p.Store(1, 1) },
		"CompareAndSwap":   func(p Ops) { p.CompareAndSwap(0, 0, 1, 1) },
		"CompareAndSwapLo": func(p Ops) { p.CompareAndSwapLo(0, 1) },
	}
	reads := map[string]func(p Ops) bool{
		"Load": func(p Ops) bool {
			lo, _ := p.Load()
			return lo == 1
		},
		"LoadLo": func(p Ops) bool { return p.LoadLo() == 1 },
		// A CompareAndSwap that fails observes the write as a load does;
		// one that succeeds observes it as a read-modify-write.
		"CompareAndSwap": func(p Ops) bool { return !p.CompareAndSwap(0, 0, 0, 0) },
	}
	for wn, write := range writes {
		for rn, read := range reads {
			t.Run(wn+"-"+rn, func(t *testing.T) {
				// Many rounds: a write whose synchronization the race
				// detector misses is reported only in some of them (a
				// sync/atomic write observed by a 128-bit load and
				// RaceAcquire was, about one round in three hundred).
				for range publishRounds {
					p := PT(new(P))
					data := new([4]uint64)
					go func() {
						data[0], data[3] = 42, 43
						write(p)
					}()
					for !read(p) {
						runtime.Gosched()
					}
					if data[0] != 42 || data[3] != 43 {
						t.Fatalf("%s then %s: the data written before the write is %v", wn, rn, *data)
					}
				}
			})
		}
	}
}
