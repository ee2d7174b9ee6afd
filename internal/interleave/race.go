package interleave

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// The data-race detector. Every explored run builds the happens-before
// relation of its steps with vector clocks, and checks every plain
// (non-atomic) access the code under test reports (hooked.PlainLoad,
// hooked.PlainWrite, hooked.PlainStore) against the earlier accesses to the
// same memory: two accesses of different threads, at least one a store,
// that happens-before does not order, are a data race, and the run fails
// with both sites (spec/explore.md §4).
//
// The edges are those of the Go memory model, built from what the seam
// reports (hooked.Access), whatever code made it (the explored copies of
// impl/, the twins of sync/atomic and sync that the rewrite substitutes):
//
//   - program order: every thread's own accesses, in the order it runs them;
//   - an atomic operation that writes (a store, a successful compare-and-
//     swap, an add, a swap, an and, an or) releases its word: the word
//     takes the thread's clock; one that reads (a load, any
//     read-modify-write, a failed compare-and-swap) acquires it: the thread
//     joins the word's clock. All of Go's atomics are sequentially
//     consistent, and "if the effect of an atomic operation A is observed
//     by atomic operation B, then A is synchronized before B": a load
//     observes the last write, and a read-modify-write carries the clocks
//     of the writes before it (a store replaces the word's clock, a
//     read-modify-write has joined it first);
//   - Unlock and RUnlock release the mutex's word, Lock and RLock acquire it;
//     a WaitGroup's Wait acquires its counter, which Add and Done release;
//   - the setup and the observations between steps run with every thread
//     paused: they are ordered before or after everything and are not
//     checked.
//
// Memory is shadowed in 8-byte granules, as ThreadSanitizer does, so a
// store of a whole struct and a load of one of its fields conflict. The
// shadow holds unsafe.Pointers: the memory it names stays alive for the
// run, so an address names one object throughout.

// vclock is a vector clock: one counter per logical thread.
type vclock []uint32

func (v vclock) join(w vclock) {
	for i, x := range w {
		if x > v[i] {
			v[i] = x
		}
	}
}

// epoch is one plain access: its thread, the thread's own clock then, the
// step it ran in and its site (0 unless sites are recorded).
type epoch struct {
	thread int32 // -1: none
	clock  uint32
	step   int32
	size   uint32
	site   uintptr
	addr   unsafe.Pointer
	atomic bool // an atomic operation: it races only with a plain access
}

// shadow is one granule's last write and the last read of each thread.
type shadow struct {
	write epoch
	reads []epoch
}

// Race is a data race found in a run: two accesses of different threads
// to the same memory, at least one a store and at least one plain (not
// atomic), not ordered by happens-before.
type Race struct {
	Addr        unsafe.Pointer
	First, Then RaceAccess
}

// RaceAccess is one side of a race.
type RaceAccess struct {
	Thread int
	Write  bool
	Atomic bool // an atomic operation (its partner is then a plain access)
	Step   int  // 1-based, as traces number steps
	Size   uintptr
	Site   string // file:line of the access, when known
}

func (a RaceAccess) String() string {
	kind := "read"
	if a.Write {
		kind = "write"
	}
	if a.Atomic {
		kind = "atomic " + kind
	}
	s := fmt.Sprintf("T%d %s of %d bytes at step %d", a.Thread, kind, a.Size, a.Step)
	if a.Site != "" {
		s += " at " + a.Site
	}
	return s
}

// racer is the detector's state for one run.
type racer struct {
	n       int
	threads []vclock
	words   map[unsafe.Pointer]vclock
	mem     map[unsafe.Pointer]*shadow
	found   *Race
	free    []*shadow
}

func newRacer(n int) *racer {
	r := &racer{n: n, words: map[unsafe.Pointer]vclock{}, mem: map[unsafe.Pointer]*shadow{}}
	for range n {
		r.threads = append(r.threads, make(vclock, n))
	}
	return r
}

// reset starts a run: every thread at clock 1, knowing nothing of the
// others (the setup before them is not checked).
func (r *racer) reset() {
	for t, v := range r.threads {
		clear(v)
		v[t] = 1
	}
	clear(r.words)
	for _, s := range r.mem {
		r.free = append(r.free, s)
	}
	clear(r.mem)
	r.found = nil
}

// sync applies the happens-before edges of one seam operation of thread t
// in step and, with check, checks it as an access (atomicAccess) between
// its acquire and its release: the epoch it leaves is the one its release
// publishes.
func (r *racer) sync(t, step int, a hooked.Access, check bool) {
	var acquire, release, replace bool
	switch a.Op {
	case hooked.Load, hooked.Wait, hooked.Lock, hooked.RLock:
		acquire = true
	case hooked.Store:
		release, replace = true, true
	case hooked.CAS:
		acquire, release = true, a.OK
	case hooked.Add, hooked.Swap, hooked.And, hooked.Or:
		acquire, release = true, true
	case hooked.Unlock, hooked.RUnlock:
		release = true
	default: // Plain, Now, Tick: no synchronization
		return
	}
	me := r.threads[t]
	w, ok := r.words[a.Word]
	if acquire && ok {
		me.join(w)
	}
	if check {
		r.atomicAccess(t, step, a)
	}
	if !release {
		return
	}
	if !ok {
		w = make(vclock, r.n)
		r.words[a.Word] = w
	}
	if replace {
		copy(w, me)
	} else {
		w.join(me)
	}
	me[t]++
}

// access checks one plain access of thread t in step (0-based) against the
// shadow of the granules it covers and records it. The first race found is
// kept; later ones are not reported.
func (r *racer) access(t, step int, addr unsafe.Pointer, size uintptr, write bool, site uintptr) {
	if size == 0 {
		return
	}
	me := r.threads[t]
	cur := epoch{thread: int32(t), clock: me[t], step: int32(step), size: uint32(size), site: site, addr: addr}
	start := uintptr(addr) &^ 7
	off := uintptr(addr) - start
	for g := uintptr(0); g < off+size; g += 8 {
		// The granule's pointer stays inside the object: objects are
		// 8-aligned, so the granule of its first byte starts inside it.
		key := unsafe.Add(addr, int(g)-int(off))
		s := r.mem[key]
		if s == nil {
			s = r.newShadow()
			r.mem[key] = s
		}
		if r.found == nil {
			if p := s.write; p.thread >= 0 && int(p.thread) != t && p.clock > me[p.thread] {
				r.report(p, true, cur, write)
			}
		}
		if t >= len(s.reads) {
			r.fitShadow(s)
		}
		if write {
			if r.found == nil {
				for _, p := range s.reads {
					if p.thread >= 0 && int(p.thread) != t && p.clock > me[p.thread] {
						r.report(p, false, cur, write)
						break
					}
				}
			}
			s.write = cur
			for i := range s.reads {
				s.reads[i].thread = -1
			}
		} else {
			s.reads[t] = cur
		}
	}
}

// atomicAccess checks one atomic operation of thread t in step (0-based)
// on the word at a.Word against the plain accesses the shadow holds, and
// records it: an atomic operation and a plain access of the same memory,
// one of them a write, unordered by happens-before, are a data race as two
// plain accesses are (the Go memory model gives such a program no
// meaning, and ThreadSanitizer reports it); two atomic operations never
// race. sync runs it after the operation's acquire, so a load that
// observes a release is ordered after what came before that release, and
// before its release, so the epoch it records is the one the release
// publishes.
func (r *racer) atomicAccess(t, step int, a hooked.Access) {
	var write bool
	switch a.Op {
	case hooked.Load:
	case hooked.Store, hooked.Add, hooked.Swap, hooked.And, hooked.Or:
		write = true
	case hooked.CAS:
		write = a.OK
	default: // locks, waits, the clock, plain stores (reported as plain accesses)
		return
	}
	addr, size := a.Word, uintptr(8)
	switch {
	case a.Hi:
		addr = unsafe.Add(a.Word, 8) // a Pair's high half
	case a.Lo:
	default:
		if _, pair := a.Old.([2]uint64); pair {
			size = 16
		} else if _, pair := a.New.([2]uint64); pair {
			size = 16
		}
	}
	// A word narrower than a granule may not start one (an atomic.Bool or
	// a uint32 of rewritten code is 4-aligned): it is checked in the
	// granule that holds it, where access shadows the plain accesses of
	// its bytes; a word of 8 bytes or more starts its granule.
	// Go's atomics are 4 or 8 bytes wide and aligned to their width, so
	// only a 4-byte word in a granule's second half is off its start. A
	// word at another offset is a word of the explorer's own (etcdexplore
	// names a request by a byte of its own): it keys its own shadow, as
	// before, and no pointer arithmetic leaves its object (the race
	// detector's checkptr rejects that).
	off := int(uintptr(addr) & 7)
	if off == 4 {
		size = 4
	} else {
		off = 0
	}
	me := r.threads[t]
	cur := epoch{thread: int32(t), clock: me[t], step: int32(step), size: uint32(size), site: a.Site, addr: addr, atomic: true}
	for g := uintptr(0); g < uintptr(off)+size; g += 8 {
		key := unsafe.Add(addr, int(g)-off)
		s := r.mem[key]
		if s == nil {
			s = r.newShadow()
			r.mem[key] = s
		}
		if r.found == nil {
			if p := s.write; p.thread >= 0 && !p.atomic && int(p.thread) != t && p.clock > me[p.thread] {
				r.report(p, true, cur, write)
			}
		}
		if t >= len(s.reads) {
			r.fitShadow(s)
		}
		if !write {
			s.reads[t] = cur
			continue
		}
		if r.found == nil {
			for _, p := range s.reads {
				if p.thread >= 0 && !p.atomic && int(p.thread) != t && p.clock > me[p.thread] {
					r.report(p, false, cur, write)
					break
				}
			}
		}
		s.write = cur
		for i := range s.reads {
			s.reads[i].thread = -1
		}
	}
}

// fitShadow gives s a read slot for every thread, the goroutines started
// since it was made included.
func (r *racer) fitShadow(s *shadow) {
	for len(s.reads) < r.n {
		s.reads = append(s.reads, epoch{thread: -1})
	}
}

// grow makes room for n threads: the goroutines a run started are
// threads of their own, numbered after the program's.
func (r *racer) grow(n int) {
	if n <= r.n {
		return
	}
	for i := range r.threads {
		r.threads[i] = append(r.threads[i], make(vclock, n-r.n)...)
	}
	for r.n < n {
		v := make(vclock, n)
		v[len(r.threads)] = 1
		r.threads = append(r.threads, v)
		r.n++
	}
	for k, w := range r.words {
		r.words[k] = append(w, make(vclock, n-len(w))...)
	}
}

// release returns a copy of thread t's clock, the edge its operation
// publishes, and moves the thread on: its later accesses are not before
// what acquires the copy.
func (r *racer) release(t int) vclock {
	me := r.threads[t]
	v := make(vclock, len(me))
	copy(v, me)
	me[t]++
	return v
}

// acquire orders thread t after the clock v (an edge into t); nil is none.
func (r *racer) acquire(t int, v vclock) {
	if v != nil {
		r.threads[t].join(v)
	}
}

// start begins thread t, a goroutine: after what its go statement
// released (from, nil for a goroutine the setup started), at its own
// clock 1.
func (r *racer) start(t int, from vclock) {
	r.grow(t + 1)
	me := r.threads[t]
	clear(me)
	if from != nil {
		me.join(from)
	}
	me[t] = 1
}

func (r *racer) newShadow() *shadow {
	var s *shadow
	if k := len(r.free); k > 0 {
		s, r.free = r.free[k-1], r.free[:k-1]
	} else {
		s = &shadow{reads: make([]epoch, r.n)}
	}
	s.write.thread = -1
	for i := range s.reads {
		s.reads[i].thread = -1
	}
	return s
}

func (r *racer) report(prev epoch, prevWrite bool, cur epoch, curWrite bool) {
	side := func(e epoch, write bool) RaceAccess {
		return RaceAccess{Thread: int(e.thread), Write: write, Atomic: e.atomic, Step: int(e.step) + 1, Size: uintptr(e.size), Site: siteName(e.site)}
	}
	r.found = &Race{Addr: cur.addr, First: side(prev, prevWrite), Then: side(cur, curWrite)}
}

// Plain implements hooked.Racer: a plain access of the running thread.
// Accesses outside the threads (setup, observations) are not checked.
func (c *controller) Plain(addr unsafe.Pointer, size uintptr, write bool, site uintptr) {
	if c.direct || c.cur == nil {
		return
	}
	if c.pairs != nil {
		c.pairs.plain(c.cur.id, addr, size, write, site)
	}
	if c.noRaces {
		return
	}
	c.race.access(c.cur.id, c.step, addr, size, write, site)
}

// Atomic implements hooked.AtomicRacer: an atomic operation of the running
// thread that is no switch point (hooked.GluedBool's), ordered and checked
// like any other. Operations outside the threads are not.
func (c *controller) Atomic(a hooked.Access) {
	if c.direct || c.cur == nil {
		return
	}
	c.race.sync(c.cur.id, c.step, a, !c.noRaces)
}

// raceFailure is the failure of a run in which r found a race.
func raceFailure(r *Race, tr tracer) *Failure {
	name := fmt.Sprintf("%p", r.Addr)
	if tr != nil {
		if w := tr.word(r.Addr); w != "" {
			name = w
		}
	}
	return &Failure{Kind: KindRace, Thread: -1, Detail: fmt.Sprintf(
		"data race on %s: %s, then %s, unordered by happens-before", name, r.First, r.Then)}
}

// siteName renders a program counter as its package directory, file and
// line ("credits/credits.go:312"), or "" for 0.
func siteName(pc uintptr) string {
	if pc == 0 {
		return ""
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	if f.File == "" {
		return ""
	}
	dir := filepath.Base(filepath.Dir(f.File))
	s := fmt.Sprintf("%s/%s:%d", dir, filepath.Base(f.File), f.Line)
	if fn := f.Function; fn != "" {
		if i := strings.LastIndex(fn, "/"); i >= 0 {
			fn = fn[i+1:]
		}
		s += " (" + fn + ")"
	}
	return s
}
