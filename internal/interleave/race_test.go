package interleave

import (
	"github.com/tollgate/tollgate/internal/fault"
	"strings"
	"testing"
	"unsafe"

	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// raceToys are programs whose plain accesses are ordered, or not, by the
// atomics around them: the happens-before detector's own checks.

// plainCounterToy: two threads each increment a plain counter (a load and
// a store, c.n++), with no synchronization: a data race on every schedule,
// even the ones where the increments do not overlap.
func plainCounterToy() *toy {
	return &toy{name: "plain counter", n: 2, build: func(c *controller, r *toyRun) {
		n := new(int)
		for t := 0; t < 2; t++ {
			r.bodies = append(r.bodies, func() {
				c.operation(liveNone, func() {
					v := *hooked.PlainLoad(n)
					*hooked.PlainWrite(n) = v + 1
				})
			})
		}
	}}
}

// publishToy: thread 0 fills a box with plain stores and publishes it by
// an atomic store; thread 1 loads the pointer and reads the box's field.
// With late true, thread 0 fills the field after publishing (the bug of
// cr-box-filled-late): a race even where thread 1 reads after the store.
func publishToy(late bool) *toy {
	type box struct{ v int }
	name := "publish"
	if late {
		name = "publish late"
	}
	return &toy{name: name, n: 2, build: func(c *controller, r *toyRun) {
		slot := new(hooked.Pointer[box])
		r.bodies = []func(){
			func() {
				c.operation(liveNone, func() {
					b := new(box)
					if !late {
						*hooked.PlainWrite(&b.v) = 7
					}
					slot.Store(b)
					if late {
						*hooked.PlainWrite(&b.v) = 7
					}
				})
			},
			func() {
				c.operation(liveNone, func() {
					if b := slot.Load(); b != nil {
						_ = *hooked.PlainLoad(&b.v)
					}
				})
			},
		}
	}}
}

// claimToy: both threads try to claim a word by compare-and-swap; the
// winner writes plain memory and then stores a done flag (release); a loser
// reads the memory only after loading the flag set (acquire): no race. With
// early true a loser reads right after its failed compare-and-swap, which
// acquires only the claim (made before the write): a race.
func claimToy(early bool) *toy {
	name := "claim"
	if early {
		name = "claim read early"
	}
	return &toy{name: name, n: 2, build: func(c *controller, r *toyRun) {
		x := new(int)
		claim, done := new(hooked.Uint64), new(hooked.Bool)
		for t := 0; t < 2; t++ {
			r.bodies = append(r.bodies, func() {
				c.operation(liveNone, func() {
					if claim.CompareAndSwap(0, 1) {
						*hooked.PlainWrite(x) = 1
						done.Store(true)
						return
					}
					if early || done.Load() {
						_ = *hooked.PlainLoad(x)
					}
				})
			})
		}
	}}
}

// loadReleasesNothingToy: thread 0 writes plain memory, then only loads a
// flag; thread 1 swaps the flag by compare-and-swap (which acquires) and
// reads the memory. A load is no release, so the two plain accesses race:
// the Go memory model orders nothing here (thread 1 observes no write of
// thread 0).
func loadReleasesNothingToy() *toy {
	return &toy{name: "load releases nothing", n: 2, build: func(c *controller, r *toyRun) {
		x := new(int)
		flag := new(hooked.Uint64)
		r.bodies = []func(){
			func() {
				c.operation(liveNone, func() {
					*hooked.PlainWrite(x) = 1
					flag.Load()
				})
			},
			func() {
				c.operation(liveNone, func() {
					flag.CompareAndSwap(0, 1)
					_ = *hooked.PlainLoad(x)
				})
			},
		}
	}}
}

// structToy: thread 0 stores a whole struct, thread 1 loads its second
// field after an unrelated atomic: the granules overlap, so they race.
func structToy() *toy {
	type pair struct{ a, b int64 }
	return &toy{name: "struct vs field", n: 2, build: func(c *controller, r *toyRun) {
		p := new(pair)
		other := new(hooked.Uint64)
		r.bodies = []func(){
			func() { c.operation(liveNone, func() { *hooked.PlainWrite(p) = pair{1, 2} }) },
			func() {
				c.operation(liveNone, func() {
					other.Add(1)
					_ = *hooked.PlainLoad(&p.b)
				})
			},
		}
	}}
}

func TestRaceDetector(t *testing.T) {
	for _, tc := range []struct {
		p    *toy
		race bool
	}{
		{plainCounterToy(), true},
		{publishToy(false), false},
		{publishToy(true), true},
		{claimToy(false), false},
		{claimToy(true), true},
		{loadReleasesNothingToy(), true},
		{structToy(), true},
	} {
		t.Run(tc.p.name, func(t *testing.T) {
			r := exploreProgram(tc.p, tc.p.name, Options{Bound: 2})
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if !tc.race {
				if r.Failure != nil {
					t.Fatalf("want no race, got %s", r.Failure.Report())
				}
				if !r.Exhaustive {
					t.Fatalf("not exhaustive: %s", r.Summary())
				}
				return
			}
			if r.Failure == nil || r.Failure.Kind != KindRace {
				t.Fatalf("want a data race, got %s", r.Summary())
			}
			f := r.Failure
			// The replay records sites: both accesses are named by file
			// and line, in this file.
			if strings.Count(f.Detail, "race_test.go:") != 2 {
				t.Errorf("the race does not name both sites: %s", f.Detail)
			}
			if !strings.Contains(f.Detail, "T0") || !strings.Contains(f.Detail, "T1") {
				t.Errorf("the race does not name both threads: %s", f.Detail)
			}
			t.Logf("%s", f.Report())
		})
	}
}

// TestRacerEdges checks the happens-before edges one sequence at a time, in
// the order given (the explorations above find a race in any schedule, so
// they cannot tell an edge too many from a schedule that races anyway).
func TestRacerEdges(t *testing.T) {
	x, w := new(int64), new(uint64)
	word := func(op hooked.Op, ok bool) hooked.Access {
		return hooked.Access{Word: unsafe.Pointer(w), Op: op, OK: ok}
	}
	type ev struct {
		t     int
		sync  *hooked.Access
		write bool // plain access to x otherwise
	}
	op := func(t int, a hooked.Access) ev { return ev{t: t, sync: &a} }
	// onX is an atomic operation on x itself, the memory the plain
	// accesses touch.
	onX := func(op hooked.Op) hooked.Access {
		return hooked.Access{Word: unsafe.Pointer(x), Op: op, OK: true}
	}
	wr := func(t int) ev { return ev{t: t, write: true} }
	rd := func(t int) ev { return ev{t: t} }
	for _, tc := range []struct {
		name string
		evs  []ev
		race bool
	}{
		{"store then load orders", []ev{wr(0), op(0, word(hooked.Store, true)), op(1, word(hooked.Load, true)), rd(1)}, false},
		{"cas then cas orders", []ev{wr(0), op(0, word(hooked.CAS, true)), op(1, word(hooked.CAS, false)), rd(1)}, false},
		{"a failed cas releases nothing", []ev{wr(0), op(0, word(hooked.CAS, false)), op(1, word(hooked.Load, true)), rd(1)}, true},
		{"a load releases nothing", []ev{wr(0), op(0, word(hooked.Load, true)), op(1, word(hooked.CAS, true)), rd(1)}, true},
		{"a store acquires nothing", []ev{wr(0), op(0, word(hooked.Store, true)), op(1, word(hooked.Store, true)), rd(1)}, true},
		{"a store replaces the word's clock", []ev{wr(0), op(0, word(hooked.Store, true)), op(1, word(hooked.Store, true)), op(2, word(hooked.Load, true)), rd(2)}, true},
		{"an add carries the clocks before it", []ev{wr(0), op(0, word(hooked.Store, true)), op(1, word(hooked.Add, true)), op(2, word(hooked.Load, true)), rd(2)}, false},
		{"unlock then lock orders", []ev{op(0, word(hooked.Lock, true)), wr(0), op(0, word(hooked.Unlock, true)), op(1, word(hooked.Lock, true)), rd(1)}, false},
		{"the write after the release is not ordered", []ev{op(0, word(hooked.Store, true)), wr(0), op(1, word(hooked.Load, true)), rd(1)}, true},
		{"two reads do not race", []ev{rd(0), rd(1)}, false},
		{"read then write races", []ev{rd(0), wr(1)}, true},
		{"reads then an ordered write", []ev{rd(0), op(0, word(hooked.Store, true)), rd(2), op(1, word(hooked.Load, true)), wr(1)}, true},
		{"one thread alone", []ev{wr(0), rd(0), wr(0)}, false},
		// An atomic operation and a plain access of the same memory.
		{"a plain write, then another thread's atomic load", []ev{wr(0), op(1, onX(hooked.Load))}, true},
		{"an atomic load, then another thread's plain write", []ev{op(0, onX(hooked.Load)), wr(1)}, true},
		{"an atomic store, then another thread's plain read", []ev{op(0, onX(hooked.Store)), rd(1)}, true},
		{"an atomic store, then a plain read after loading it", []ev{op(0, onX(hooked.Store)), op(1, onX(hooked.Load)), rd(1)}, false},
		{"a plain write, then the same thread's store, then a load", []ev{wr(0), op(0, onX(hooked.Store)), op(1, onX(hooked.Load)), rd(1)}, false},
		{"two atomic operations never race", []ev{op(0, onX(hooked.Store)), op(1, onX(hooked.Store)), op(2, onX(hooked.Load))}, false},
	} {
		r := newRacer(3)
		r.reset()
		for i, e := range tc.evs {
			if e.sync != nil {
				r.sync(e.t, i, *e.sync, true)
			} else {
				r.access(e.t, i, unsafe.Pointer(x), 8, e.write, 0)
			}
		}
		if got := r.found != nil; got != tc.race {
			t.Errorf("%s: race %v, want %v (%+v)", tc.name, got, tc.race, r.found)
		}
	}
}

// TestRacesFindWhatSwitchPointsMiss: cr-finish-clears-payload zeroes a box's
// payload with a plain store after the compare-and-swap that freed its row,
// and the reads it races with are plain loads inside the steps of the
// atomic loads before them. Switching at atomics and plain stores, the
// catalogue's credit scenarios cannot schedule a read after the store and
// before the next atomic of the reader: every scenario the detector kills
// passes with the detector off. With it on, the store and a read unordered
// by happens-before fail the run. The detector's sweep is at bound 1
// (it kills the same two scenarios as at bound 2, for a quarter of the
// CPU); each scenario it kills is explored with the detector off at the
// default bound, as before.
func TestRacesFindWhatSwitchPointsMiss(t *testing.T) {
	build.Need(t)
	var killed []string
	for _, s := range Catalogue() {
		if s.Primitive != Credits {
			continue
		}
		r := Explore(s, Options{Fault: fault.Named("cr-finish-clears-payload"), Bound: 1})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.Failure == nil {
			continue
		}
		if r.Failure.Kind != KindRace || !strings.Contains(r.Failure.Detail, "payload") {
			t.Fatalf("%s: want a data race on a payload, got %s", s.Name, r.Failure.Report())
		}
		if r := Explore(s, Options{Fault: fault.Named("cr-finish-clears-payload"), NoRaces: true}); r.Failure != nil || r.Err != nil {
			t.Fatalf("%s with the detector off: %s", s.Name, r.Summary())
		}
		killed = append(killed, s.Name)
	}
	if len(killed) == 0 {
		t.Fatal("no credit scenario of the catalogue found the race")
	}
	t.Logf("killed by %v", killed)
}

// TestBoundsCheck: an explored run that reads past an object it allocated,
// through unsafe.Add and a conversion as the trie's kid does, fails at the
// step that left the object, as a panic naming memory safety; the same
// read inside the object passes. (Without the check such a read lands in
// whatever the allocator put next.)
func TestBoundsCheck(t *testing.T) {
	type word struct{ v hooked.Uint64 }
	// read reads the word off bytes into an object of four.
	read := func(off uintptr) *toy {
		return &toy{name: "bounds", n: 1, build: func(c *controller, r *toyRun) {
			node := &hooked.Alloc(new([4]word))[0]
			r.bodies = []func(){func() {
				c.operation(liveNone, func() {
					p := (*word)(hooked.UnsafeCast[word](hooked.UnsafeAdd(unsafe.Pointer(node), off)))
					p.v.Load()
				})
			}}
		}}
	}
	size := unsafe.Sizeof(word{})
	if r := exploreProgram(read(3*size), "inside", Options{}); r.Failure != nil {
		t.Fatalf("a read inside the object failed: %s", r.Failure.Report())
	}
	for _, tc := range []struct {
		name string
		off  uintptr
		op   string // the operation the failure names
	}{
		{"an address past the end", 4 * size, "unsafe.Add reaches"},
		{"a word that runs past the end", 3*size + size/2, "conversion to *interleave.word reaches"},
	} {
		r := exploreProgram(read(tc.off), tc.name, Options{})
		if r.Failure == nil || r.Failure.Kind != KindPanic || !strings.Contains(r.Failure.Detail, "memory safety: "+tc.op) {
			t.Fatalf("%s: %s", tc.name, r.Summary())
		}
	}
}

// TestRacerSmallWords: an atomic operation on a word narrower than a
// granule that does not start one (an atomic.Bool, a uint32: 4-aligned,
// the twins' words in rewritten code) meets the plain accesses of the same
// bytes in the granule that holds them.
func TestRacerSmallWords(t *testing.T) {
	pair := new([2]uint32)
	x := unsafe.Pointer(&pair[1]) // 4 bytes into its granule
	for _, tc := range []struct {
		name  string
		first bool // the atomic operation comes first
		op    hooked.Op
		write bool
	}{
		{"a plain write of a 4-byte word, then another thread's atomic load", false, hooked.Load, true},
		{"an atomic load of a 4-byte word, then another thread's plain write", true, hooked.Load, true},
		{"an atomic store of a 4-byte word, then another thread's plain read", true, hooked.Store, false},
	} {
		r := newRacer(2)
		r.reset()
		a := hooked.Access{Word: x, Op: tc.op, OK: true}
		if tc.first {
			r.sync(0, 0, a, true)
			r.access(1, 1, x, 1, tc.write, 0)
		} else {
			r.access(0, 0, x, 1, tc.write, 0)
			r.sync(1, 1, a, true)
		}
		if r.found == nil {
			t.Errorf("%s: no race", tc.name)
		}
	}
}
