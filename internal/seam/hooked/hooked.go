// Package hooked is internal/seam with every operation a switch point: the
// same types and methods, each of which first hands control to the
// installed Scheduler and, once it has run, reports what it did. With no
// scheduler installed every method is the plain sync/atomic operation (for
// Pair, seam.Pair's own).
//
// The real tables of impl/ import internal/seam, whose methods are
// sync/atomic's and compile to the same instructions. go generate
// (internal/mutants/gen) writes copies of the impl packages whose only
// difference is that import, rewritten to this package; the interleaving
// explorer (internal/interleave) drives those copies. So the explored code is
// the real code, line for line, and the real build pays nothing for it.
//
// One scheduler at a time is installed for the whole process (Install
// refuses a second): exploration runs the code under test one logical
// thread at a time, so no other goroutine may use a hooked table while a
// scheduler is installed.
package hooked

import (
	"sync/atomic"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam"
)

// Op is the kind of a shared-memory operation.
type Op uint8

// The operations. A compare-and-swap that fails writes nothing: Access.Wrote
// reports false for it, so it conflicts with other operations as a read.
const (
	Load Op = iota + 1
	Store
	CAS
	Add
	// Plain is a plain (non-atomic) store that the code under test is about
	// to make: see PlainStore.
	Plain
	// Swap stores a new value and returns the old one; And and Or are
	// read-modify-writes (sync/atomic's And* and Or*). Old is the value
	// before, New the value after.
	Swap
	And
	Or
	// Lock, Unlock, RLock and RUnlock are a mutex's operations, Wait a
	// WaitGroup's wait (a read of its counter once it is zero); Lock, RLock
	// and Wait block (see Blocker). Lock, Unlock, RLock and RUnlock write the
	// mutex's word.
	Lock
	Unlock
	RLock
	RUnlock
	Wait
	// Now reads a virtual clock; Tick advances it.
	Now
	Tick
)

func (o Op) String() string {
	switch o {
	case Load:
		return "load"
	case Store:
		return "store"
	case CAS:
		return "cas"
	case Add:
		return "add"
	case Plain:
		return "plain store"
	case Swap:
		return "swap"
	case And:
		return "and"
	case Or:
		return "or"
	case Lock:
		return "lock"
	case Unlock:
		return "unlock"
	case RLock:
		return "rlock"
	case RUnlock:
		return "runlock"
	case Wait:
		return "wait"
	case Now:
		return "now"
	case Tick:
		return "tick"
	}
	return "op?"
}

// Access is one operation that has run: the word it touched (its address),
// the kind, and its values. Old is the value loaded (Load), the expected
// value (CAS) or the value before (Add, Store: not read, nil); New the value
// stored, swapped in, or the sum. OK is the CAS result (true for the
// others). Values are *T for pointer words, uint64 and bool otherwise.
//
// A Pair is one word: its Word is the Pair's address whichever half an
// operation touched, so that two accesses to one Pair conflict when either
// wrote. Its 128-bit operations (Load, Store, CompareAndSwap) have [2]uint64
// values, {lo, hi}; LoadLo and CompareAndSwapLo have uint64 values, of lo
// alone, and set Lo; LoadHi has hi's value and sets Hi.
type Access struct {
	Word     unsafe.Pointer
	Op       Op
	Old, New any
	OK       bool
	Lo       bool // the operation was a Pair's LoadLo or CompareAndSwapLo
	Hi       bool // the operation was a Pair's LoadHi
	// Site is the program counter of the call in the code under test that
	// made the operation, while sites are recorded (SetSites); else 0.
	Site uintptr
}

var sites atomic.Bool

// SetSites turns the recording of call sites (Access.Site) on or off. A
// scheduler turns it on while it replays a run for a trace, and to measure
// interleaving coverage (about 0.1 µs a step once a site was met, pcAbove;
// a microsecond the first time).
func SetSites(on bool) { sites.Store(on) }

// Site returns, while sites are recorded, the program counter of the
// caller skip frames above Site's caller (skip 1: the caller of the
// function that calls Site); else 0.
//
//go:noinline
func Site(skip int) uintptr {
	if !sites.Load() {
		return 0
	}
	return pcAbove(skip + 1)
}

// Wrote reports whether the operation changed memory (a failed CAS did
// not; a load, a clock reading and a wait do not).
func (a Access) Wrote() bool { return a.Op != Load && a.Op != Now && a.Op != Wait && a.OK }

// Scheduler decides when the calling logical thread may run its next
// operation.
type Scheduler interface {
	// Before is called before op on word by the running logical thread and
	// returns when that thread is scheduled to perform it.
	Before(word unsafe.Pointer, op Op)
	// After reports the operation, right after it ran.
	After(a Access)
}

// Blocker is a Scheduler that can hold a thread back until an operation
// may run: a Lock of a held mutex, a Wait on a WaitGroup whose counter is
// not zero. Every scheduler that drives code with blocking operations
// implements it.
type Blocker interface {
	Scheduler
	// BeforeWhen is Before for an operation that may run only when ready
	// reports true. It returns when the thread is scheduled and ready holds;
	// ready is called with nothing else running. A scheduler that finds
	// every unfinished thread waiting on a ready that is false reports a
	// deadlock.
	BeforeWhen(word unsafe.Pointer, op Op, ready func() bool)
}

var installed atomic.Pointer[Scheduler]

// Install makes s the process's scheduler until the returned function is
// called. It panics if a scheduler is installed already.
func Install(s Scheduler) (uninstall func()) {
	if !installed.CompareAndSwap(nil, &s) {
		panic("hooked: a scheduler is installed already (one exploration at a time)")
	}
	return func() { installed.Store(nil) }
}

// Current is the installed scheduler, or nil. Code with switch points
// (this package's types, the twins of sync/atomic, sync and time in
// github.com/tollgate/tollgate/explore) calls it at every operation: with
// nil it performs the plain operation.
func Current() Scheduler { return current() }

func current() Scheduler {
	if p := installed.Load(); p != nil {
		return *p
	}
	return nil
}

// PlainStore is the switch point before a plain store to *p: the explored
// copies of impl/ call it before every store that may write shared memory
// (a field of a heap object, an element of a slice), so that another thread
// may run between the seam operation before the store and the store. It
// stores nothing itself; the Access it reports has the word p, Op Plain and
// no values; a scheduler that detects races (Racer) is then told of the
// store. A plain load is no switch point, so the scheduler must treat
// a plain store as conflicting with every step of another thread.
func PlainStore[T any](p *T) {
	s := current()
	if s == nil {
		return
	}
	w := unsafe.Pointer(p)
	s.Before(w, Plain)
	s.After(Access{Word: w, Op: Plain, OK: true, Site: callerPC()})
	if r, ok := s.(Racer); ok {
		r.Plain(w, unsafe.Sizeof(*p), true, callerPC())
	}
}

// Racer is implemented by a Scheduler that detects data races: it is told
// of every plain (non-atomic) access the code under test reports, and
// orders it against the other threads' accesses by happens-before, which
// it builds from the operations Before and After report (spec/explore.md
// §4).
type Racer interface {
	// Plain reports a plain access of size bytes at addr by the running
	// logical thread: a store when write is true, else a load. site is the
	// program counter of the access in the code under test, while sites
	// are recorded (SetSites); else 0.
	// It is no switch point: the access runs inside the current step.
	Plain(addr unsafe.Pointer, size uintptr, write bool, site uintptr)
}

// PlainLoad reports a plain load of *p to the installed scheduler, if it
// detects races (Racer), and returns p: the explored copies of impl/ and
// code rewritten for the explorer read shared memory as *PlainLoad(&x), so
// the load is reported exactly where it happens, after every operation
// evaluated before it. It is no switch point.
func PlainLoad[T any](p *T) *T {
	if s := current(); s != nil {
		if r, ok := s.(Racer); ok {
			r.Plain(unsafe.Pointer(p), unsafe.Sizeof(*p), false, callerPC())
		}
	}
	return p
}

// PlainWrite reports a plain store to *p, about to be made, to a scheduler
// that detects races, without a switch point (PlainStore is the same with
// one), and returns p, so a store can be written *PlainWrite(&x) = v.
func PlainWrite[T any](p *T) *T {
	if s := current(); s != nil {
		if r, ok := s.(Racer); ok {
			r.Plain(unsafe.Pointer(p), unsafe.Sizeof(*p), true, callerPC())
		}
	}
	return p
}

// callerPC is, while sites are recorded (SetSites), the program counter of
// the call of the function that calls it (the access in the code under
// test); else 0. A race detector replays the failing schedule with sites
// on to name the accesses.
//
//go:noinline
func callerPC() uintptr {
	if !sites.Load() {
		return 0
	}
	return pcAbove(2)
}

// Bounds is implemented by a Scheduler that checks the memory safety of
// unsafe pointer arithmetic in the code under test: it is told of every
// object the explored copies allocate (Alloc) and judges every unsafe.Add
// and every conversion of an unsafe.Pointer to a typed pointer (UnsafeAdd,
// UnsafeCast) against the object the pointer points into. A pointer into
// memory it was not told of (a local, an object allocated elsewhere) is
// not judged.
type Bounds interface {
	// Alloc records the object of size bytes at p.
	Alloc(p unsafe.Pointer, size uintptr)
	// Within panics when [p, p+size) starts inside a recorded object and
	// does not end inside it, or when base is inside one and p is not
	// (what names the operation for the message, and typ, when not nil,
	// is a nil *T for a conversion to *T: the message is formatted only
	// then, so that a check that passes costs nothing). base nil: p alone. p is
	// an address, not yet a pointer: the check comes before the
	// arithmetic, which a -race build's checkptr would stop first.
	Within(base unsafe.Pointer, p, size uintptr, what string, typ any)
}

// Alloc reports the object p to a scheduler that checks bounds and returns
// p: the explored copies allocate as seam.Alloc(new(T)) and
// seam.Alloc(&T{...}).
//
// An allocation also initializes its object: to a scheduler that detects
// races it is a plain store of the whole object, so a thread that reads the
// object without synchronizing with the one that made it (a pointer
// published by a plain store) races with its initialization.
func Alloc[T any](p *T) *T {
	if s := current(); s != nil {
		if b, ok := s.(Bounds); ok {
			b.Alloc(unsafe.Pointer(p), unsafe.Sizeof(*p))
		}
		if r, ok := s.(Racer); ok {
			r.Plain(unsafe.Pointer(p), unsafe.Sizeof(*p), true, callerPC())
		}
	}
	return p
}

// UnsafeAdd is unsafe.Add(p, off), judged by a scheduler that checks
// bounds: the result must stay inside the object p points into.
func UnsafeAdd(p unsafe.Pointer, off uintptr) unsafe.Pointer {
	if s := current(); s != nil {
		if b, ok := s.(Bounds); ok {
			b.Within(p, uintptr(p)+off, 1, "unsafe.Add", nil)
		}
	}
	return unsafe.Add(p, off)
}

// UnsafeCast returns p, judged by a scheduler that checks bounds: a *T at
// p must lie inside the object p points into. The explored copies convert
// as (*T)(seam.UnsafeCast[T](p)).
func UnsafeCast[T any](p unsafe.Pointer) unsafe.Pointer {
	if s := current(); s != nil && p != nil {
		if b, ok := s.(Bounds); ok {
			var t T
			b.Within(nil, uintptr(p), unsafe.Sizeof(t), "conversion", (*T)(nil))
		}
	}
	return p
}

// Pointer is an atomic *T whose operations are switch points.
type Pointer[T any] struct{ v atomic.Pointer[T] }

func (p *Pointer[T]) word() unsafe.Pointer { return unsafe.Pointer(p) }

// Load atomically loads the pointer.
func (p *Pointer[T]) Load() *T {
	s := current()
	if s == nil {
		return p.v.Load()
	}
	s.Before(p.word(), Load)
	v := p.v.Load()
	s.After(Access{Word: p.word(), Op: Load, Old: v, OK: true, Site: callerPC()})
	return v
}

// Store atomically stores v.
func (p *Pointer[T]) Store(v *T) {
	s := current()
	if s == nil {
		p.v.Store(v)
		return
	}
	s.Before(p.word(), Store)
	p.v.Store(v)
	s.After(Access{Word: p.word(), Op: Store, New: v, OK: true, Site: callerPC()})
}

// CompareAndSwap executes the compare-and-swap operation on the pointer.
func (p *Pointer[T]) CompareAndSwap(old, new *T) bool {
	s := current()
	if s == nil {
		return p.v.CompareAndSwap(old, new)
	}
	s.Before(p.word(), CAS)
	ok := p.v.CompareAndSwap(old, new)
	s.After(Access{Word: p.word(), Op: CAS, Old: old, New: new, OK: ok, Site: callerPC()})
	return ok
}

// Peek atomically loads p's pointer without a switch point and reports
// nothing. The tables never call it: it is for the interleaving explorer,
// which reads a table's structure between steps (internal/layout).
// It is a function, not a method, so that Pointer keeps seam.Pointer's
// methods.
func Peek[T any](p *Pointer[T]) *T { return p.v.Load() }

// Uint64 is an atomic uint64 whose operations are switch points.
type Uint64 struct{ v atomic.Uint64 }

func (u *Uint64) word() unsafe.Pointer { return unsafe.Pointer(u) }

// Load atomically loads the value.
func (u *Uint64) Load() uint64 {
	s := current()
	if s == nil {
		return u.v.Load()
	}
	s.Before(u.word(), Load)
	v := u.v.Load()
	s.After(Access{Word: u.word(), Op: Load, Old: v, OK: true, Site: callerPC()})
	return v
}

// Add atomically adds delta and returns the new value.
func (u *Uint64) Add(delta uint64) uint64 {
	s := current()
	if s == nil {
		return u.v.Add(delta)
	}
	s.Before(u.word(), Add)
	v := u.v.Add(delta)
	s.After(Access{Word: u.word(), Op: Add, Old: v - delta, New: v, OK: true, Site: callerPC()})
	return v
}

// CompareAndSwap executes the compare-and-swap operation on the value.
func (u *Uint64) CompareAndSwap(old, new uint64) bool {
	s := current()
	if s == nil {
		return u.v.CompareAndSwap(old, new)
	}
	s.Before(u.word(), CAS)
	ok := u.v.CompareAndSwap(old, new)
	s.After(Access{Word: u.word(), Op: CAS, Old: old, New: new, OK: ok, Site: callerPC()})
	return ok
}

// Store atomically stores v. (The real tables never store to a counter;
// a mutant that draws an epoch by load-then-store does.)
func (u *Uint64) Store(v uint64) {
	s := current()
	if s == nil {
		u.v.Store(v)
		return
	}
	s.Before(u.word(), Store)
	u.v.Store(v)
	s.After(Access{Word: u.word(), Op: Store, New: v, OK: true, Site: callerPC()})
}

// Bool is an atomic bool whose operations are switch points.
type Bool struct{ v atomic.Bool }

func (b *Bool) word() unsafe.Pointer { return unsafe.Pointer(b) }

// Load atomically loads the value.
func (b *Bool) Load() bool {
	s := current()
	if s == nil {
		return b.v.Load()
	}
	s.Before(b.word(), Load)
	v := b.v.Load()
	s.After(Access{Word: b.word(), Op: Load, Old: v, OK: true, Site: callerPC()})
	return v
}

// Store atomically stores v.
func (b *Bool) Store(v bool) {
	s := current()
	if s == nil {
		b.v.Store(v)
		return
	}
	s.Before(b.word(), Store)
	b.v.Store(v)
	s.After(Access{Word: b.word(), Op: Store, New: v, OK: true, Site: callerPC()})
}

// Pair is a seam.Pair whose operations are switch points. It is the real
// seam.Pair inside, so with no scheduler installed each method is exactly
// seam.Pair's operation (atomic, with its costs), and under a scheduler the
// operation between Before and After is that same atomic operation. It has
// seam.Pair's size, which impl/ may pad by. It must not be copied after first
// use.
type Pair struct{ v seam.Pair }

func (p *Pair) word() unsafe.Pointer { return unsafe.Pointer(p) }

// Load atomically loads both halves.
func (p *Pair) Load() (lo, hi uint64) {
	s := current()
	if s == nil {
		return p.v.Load()
	}
	s.Before(p.word(), Load)
	lo, hi = p.v.Load()
	s.After(Access{Word: p.word(), Op: Load, Old: [2]uint64{lo, hi}, OK: true, Site: callerPC()})
	return lo, hi
}

// LoadLo atomically loads lo alone.
func (p *Pair) LoadLo() uint64 {
	s := current()
	if s == nil {
		return p.v.LoadLo()
	}
	s.Before(p.word(), Load)
	lo := p.v.LoadLo()
	s.After(Access{Word: p.word(), Op: Load, Old: lo, OK: true, Lo: true, Site: callerPC()})
	return lo
}

// LoadHi atomically loads hi alone.
func (p *Pair) LoadHi() uint64 {
	s := current()
	if s == nil {
		return p.v.LoadHi()
	}
	s.Before(p.word(), Load)
	hi := p.v.LoadHi()
	s.After(Access{Word: p.word(), Op: Load, Old: hi, OK: true, Hi: true, Site: callerPC()})
	return hi
}

// Store atomically stores lo and hi.
func (p *Pair) Store(lo, hi uint64) {
	s := current()
	if s == nil {
		p.v.Store(lo, hi)
		return
	}
	s.Before(p.word(), Store)
	p.v.Store(lo, hi)
	s.After(Access{Word: p.word(), Op: Store, New: [2]uint64{lo, hi}, OK: true, Site: callerPC()})
}

// CompareAndSwap executes the compare-and-swap operation on both halves.
func (p *Pair) CompareAndSwap(oldLo, oldHi, newLo, newHi uint64) (swapped bool) {
	s := current()
	if s == nil {
		return p.v.CompareAndSwap(oldLo, oldHi, newLo, newHi)
	}
	s.Before(p.word(), CAS)
	ok := p.v.CompareAndSwap(oldLo, oldHi, newLo, newHi)
	s.After(Access{Word: p.word(), Op: CAS, Old: [2]uint64{oldLo, oldHi}, New: [2]uint64{newLo, newHi}, OK: ok, Site: callerPC()})
	return ok
}

// CompareAndSwapLo executes the compare-and-swap operation on lo alone; hi
// is neither compared nor changed.
func (p *Pair) CompareAndSwapLo(old, new uint64) (swapped bool) {
	s := current()
	if s == nil {
		return p.v.CompareAndSwapLo(old, new)
	}
	s.Before(p.word(), CAS)
	ok := p.v.CompareAndSwapLo(old, new)
	s.After(Access{Word: p.word(), Op: CAS, Old: old, New: new, OK: ok, Lo: true, Site: callerPC()})
	return ok
}

// GluedBool is a Bool whose operations are no switch points: each runs
// inside the step of the seam operation before it, and a scheduler that
// detects races (AtomicRacer) is told of it, so that it orders it by
// happens-before as the atomic operation it is and checks it against the
// plain accesses of its word. The explored copy of impl/credits's Holder
// holds its liveness flag in one: Exit's store and Sweep's load stay
// glued to their operations (spec/explore.md §6), and a plain store in
// place of either is the data race it is.
type GluedBool struct{ v atomic.Bool }

func (b *GluedBool) word() unsafe.Pointer { return unsafe.Pointer(b) }

// Load is atomic.Bool's Load, reported to an AtomicRacer.
func (b *GluedBool) Load() bool {
	v := b.v.Load()
	glued(Access{Word: b.word(), Op: Load, Old: v, OK: true, Site: callerPC()})
	return v
}

// Store is atomic.Bool's Store, reported to an AtomicRacer.
func (b *GluedBool) Store(v bool) {
	b.v.Store(v)
	glued(Access{Word: b.word(), Op: Store, New: v, OK: true, Site: callerPC()})
}

// AtomicRacer is implemented by a Racer that is told of atomic operations
// that are no switch points (GluedBool's): Atomic applies a's
// happens-before edges and checks it against the plain accesses of its
// word, in the running thread's current step.
type AtomicRacer interface {
	Atomic(a Access)
}

func glued(a Access) {
	s := current()
	if s == nil {
		return
	}
	if r, ok := s.(AtomicRacer); ok {
		r.Atomic(a)
	}
}

// Bounder is implemented by a Scheduler that explores the code under test
// with one of its named bounds lowered (small-scope exploration): a bound
// no explored run could reach at its real value, such as the credit
// table's generation cap of 2^58 − 1 reservations of one slot, is met in a
// few operations, so the code at its edge runs under the schedule too.
type Bounder interface {
	// Bound returns the value the code should use for the bound called
	// name, whose real value is v.
	Bound(name string, v uint64) uint64
}

// Bound is the value of the bound called name, whose real value is v: v
// itself unless a Scheduler that lowers bounds (Bounder) is installed. The
// explored copies of impl/ read every package-level constant named
// max… through it, as seam.Bound("maxGen", maxGen).
func Bound(name string, v uint64) uint64 {
	if s := current(); s != nil {
		if b, ok := s.(Bounder); ok {
			return b.Bound(name, v)
		}
	}
	return v
}
