// Package sync is the twin of the standard library's sync that tollgate
// explore's rewrite substitutes for it when it builds code for exploration:
// Mutex, RWMutex, Once, WaitGroup, OnceFunc, OnceValue and OnceValues, with
// the same methods, each operation a switch point of the explorer.
//
// With no explorer running every type is the standard one inside (a
// sync.Mutex, a sync.RWMutex, a sync.WaitGroup), so rewritten code behaves
// exactly as before. Under the explorer a thread that must wait (a Lock of
// a held mutex, a Wait while the counter is above zero) is not runnable
// until another thread releases it; a state where every unfinished thread
// waits is reported as a deadlock. A value must not be used by the
// explorer and by free-running goroutines at the same time: it holds the
// state of each apart.
//
// Cond is here too: Wait, Signal and Broadcast are switch points, and a
// waiting thread is not runnable until it is signalled; Map, every method
// a switch point; and Pool, made deterministic. Locker is an interface:
// the rewrite leaves it as it is.
package sync

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/tollgate/tollgate/explore/rt"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// wait pauses the calling thread before op on w until ready holds.
func wait(s hooked.Scheduler, w unsafe.Pointer, op hooked.Op, ready func() bool) {
	if b, ok := s.(hooked.Blocker); ok {
		b.BeforeWhen(w, op, ready)
		return
	}
	s.Before(w, op)
	if !ready() {
		panic("explore/sync: " + op.String() + " must wait, and the installed scheduler cannot block a thread")
	}
}

// Mutex is sync.Mutex whose Lock, TryLock and Unlock are switch points.
// It is a sync.Mutex and nothing else, so it has its size (code that pads
// a structure around a mutex with unsafe.Sizeof builds unchanged): under
// the explorer only one thread runs at a time, so the mutex's own state,
// probed with TryLock, tells whether another thread holds it. Its zero
// value is an unlocked mutex. It must not be copied after first use.
type Mutex struct{ mu sync.Mutex }

// free reports whether m is unlocked, leaving it as it is.
func (m *Mutex) free() bool {
	if m.mu.TryLock() {
		m.mu.Unlock()
		return true
	}
	return false
}

// Lock locks m; under the explorer the thread waits while another holds
// it.
func (m *Mutex) Lock() {
	s := hooked.Current()
	if s == nil {
		m.mu.Lock()
		return
	}
	w := unsafe.Pointer(m)
	wait(s, w, hooked.Lock, m.free)
	m.mu.Lock() // free: it does not block
	s.After(hooked.Access{Word: w, Op: hooked.Lock, OK: true, Site: hooked.Site(1)})
}

// TryLock locks m if it is free and reports whether it did.
func (m *Mutex) TryLock() bool {
	s := hooked.Current()
	if s == nil {
		return m.mu.TryLock()
	}
	w := unsafe.Pointer(m)
	s.Before(w, hooked.Lock)
	ok := m.mu.TryLock()
	s.After(hooked.Access{Word: w, Op: hooked.Lock, OK: ok, Site: hooked.Site(1)})
	return ok
}

// Unlock unlocks m. Unlocking a mutex that is not locked panics, as it is
// a fatal error for sync.Mutex.
func (m *Mutex) Unlock() {
	s := hooked.Current()
	if s == nil {
		m.mu.Unlock()
		return
	}
	w := unsafe.Pointer(m)
	s.Before(w, hooked.Unlock)
	if m.free() {
		panic("sync: unlock of unlocked mutex")
	}
	m.mu.Unlock()
	s.After(hooked.Access{Word: w, Op: hooked.Unlock, OK: true, Site: hooked.Site(1)})
}

// RWMutex is sync.RWMutex whose operations are switch points; like Mutex
// it is the standard type alone, and has its size. Under the explorer a
// writer's Lock waits while a writer or a reader holds it, and RLock while
// a writer holds it. Unlike sync.RWMutex, a writer waiting in Lock does not
// keep new readers out (the explorer sees no waiting writer in the
// mutex's state), so a reader that locks twice while a writer waits is not
// reported as a deadlock. Its zero value is unlocked.
type RWMutex struct{ mu sync.RWMutex }

func (rw *RWMutex) writable() bool {
	if rw.mu.TryLock() {
		rw.mu.Unlock()
		return true
	}
	return false
}

func (rw *RWMutex) readable() bool {
	if rw.mu.TryRLock() {
		rw.mu.RUnlock()
		return true
	}
	return false
}

// Lock locks rw for writing.
func (rw *RWMutex) Lock() {
	s := hooked.Current()
	if s == nil {
		rw.mu.Lock()
		return
	}
	w := unsafe.Pointer(rw)
	wait(s, w, hooked.Lock, rw.writable)
	rw.mu.Lock()
	s.After(hooked.Access{Word: w, Op: hooked.Lock, OK: true, Site: hooked.Site(1)})
}

// TryLock locks rw for writing if it is free and reports whether it did.
func (rw *RWMutex) TryLock() bool {
	s := hooked.Current()
	if s == nil {
		return rw.mu.TryLock()
	}
	w := unsafe.Pointer(rw)
	s.Before(w, hooked.Lock)
	ok := rw.mu.TryLock()
	s.After(hooked.Access{Word: w, Op: hooked.Lock, OK: ok, Site: hooked.Site(1)})
	return ok
}

// Unlock unlocks rw for writing.
func (rw *RWMutex) Unlock() {
	s := hooked.Current()
	if s == nil {
		rw.mu.Unlock()
		return
	}
	w := unsafe.Pointer(rw)
	s.Before(w, hooked.Unlock)
	if rw.readable() {
		panic("sync: Unlock of unlocked RWMutex")
	}
	rw.mu.Unlock()
	s.After(hooked.Access{Word: w, Op: hooked.Unlock, OK: true, Site: hooked.Site(1)})
}

// RLock locks rw for reading.
func (rw *RWMutex) RLock() {
	s := hooked.Current()
	if s == nil {
		rw.mu.RLock()
		return
	}
	w := unsafe.Pointer(rw)
	wait(s, w, hooked.RLock, rw.readable)
	rw.mu.RLock()
	s.After(hooked.Access{Word: w, Op: hooked.RLock, OK: true, Site: hooked.Site(1)})
}

// TryRLock locks rw for reading if it can without waiting and reports
// whether it did.
func (rw *RWMutex) TryRLock() bool {
	s := hooked.Current()
	if s == nil {
		return rw.mu.TryRLock()
	}
	w := unsafe.Pointer(rw)
	s.Before(w, hooked.RLock)
	ok := rw.mu.TryRLock()
	s.After(hooked.Access{Word: w, Op: hooked.RLock, OK: ok, Site: hooked.Site(1)})
	return ok
}

// RUnlock undoes one RLock.
func (rw *RWMutex) RUnlock() {
	s := hooked.Current()
	if s == nil {
		rw.mu.RUnlock()
		return
	}
	w := unsafe.Pointer(rw)
	s.Before(w, hooked.RUnlock)
	if rw.writable() {
		panic("sync: RUnlock of unlocked RWMutex")
	}
	rw.mu.RUnlock()
	s.After(hooked.Access{Word: w, Op: hooked.RUnlock, OK: true, Site: hooked.Site(1)})
}

// RLocker returns a sync.Locker whose Lock and Unlock are rw's RLock and
// RUnlock.
func (rw *RWMutex) RLocker() sync.Locker { return (*rlocker)(rw) }

type rlocker RWMutex

func (r *rlocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *rlocker) Unlock() { (*RWMutex)(r).RUnlock() }

// WaitGroup is sync.WaitGroup whose Add, Done and Wait are switch points.
type WaitGroup struct {
	wg sync.WaitGroup // with no explorer
	n  int            // the counter, under the explorer
}

// Add adds delta to the counter; a negative counter panics, as it does
// for sync.WaitGroup.
func (g *WaitGroup) Add(delta int) {
	s := hooked.Current()
	if s == nil {
		g.wg.Add(delta)
		return
	}
	w := unsafe.Pointer(g)
	s.Before(w, hooked.Add)
	old := g.n
	g.n += delta
	if g.n < 0 {
		panic("sync: negative WaitGroup counter")
	}
	s.After(hooked.Access{Word: w, Op: hooked.Add, Old: old, New: g.n, OK: true, Site: hooked.Site(1)})
}

// Done decrements the counter by one.
func (g *WaitGroup) Done() { g.Add(-1) }

// Wait waits until the counter is zero.
func (g *WaitGroup) Wait() {
	s := hooked.Current()
	if s == nil {
		g.wg.Wait()
		return
	}
	w := unsafe.Pointer(g)
	wait(s, w, hooked.Wait, func() bool { return g.n == 0 })
	s.After(hooked.Access{Word: w, Op: hooked.Wait, Old: 0, OK: true, Site: hooked.Site(1)})
}

// Go calls f in a new goroutine and adds that task to the group. Under
// the explorer the goroutine is a logical thread of the run, as a go
// statement's is.
func (g *WaitGroup) Go(f func()) {
	if hooked.Current() == nil {
		g.wg.Go(f)
		return
	}
	g.Add(1)
	site := "?"
	if _, file, line, ok := runtime.Caller(1); ok {
		site = fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(file)), filepath.Base(file), line)
	}
	rt.Go(site, func() {
		defer g.Done()
		f()
	})
}

// Once is sync.Once whose fast-path load, lock and completion store are
// switch points. Its zero value is ready to use.
type Once struct {
	done flag
	m    Mutex
}

// Do calls f if and only if Do has not been called on o before; every
// call returns after f has returned (or panicked).
func (o *Once) Do(f func()) {
	if o.done.load() {
		return
	}
	o.m.Lock()
	defer o.m.Unlock()
	if !o.done.load() {
		defer o.done.store()
		f()
	}
}

// flag is a bool word whose load and store are switch points.
type flag struct{ v uint32 }

func (f *flag) load() bool {
	s := hooked.Current()
	if s == nil {
		return atomicLoad(&f.v)
	}
	w := unsafe.Pointer(f)
	s.Before(w, hooked.Load)
	v := atomicLoad(&f.v)
	s.After(hooked.Access{Word: w, Op: hooked.Load, Old: v, OK: true, Site: hooked.Site(2)})
	return v
}

func (f *flag) store() {
	s := hooked.Current()
	if s == nil {
		atomicStore(&f.v)
		return
	}
	w := unsafe.Pointer(f)
	s.Before(w, hooked.Store)
	atomicStore(&f.v)
	s.After(hooked.Access{Word: w, Op: hooked.Store, New: true, OK: true, Site: hooked.Site(2)})
}

// OnceFunc returns a function that calls f only the first time it is
// called; if f panics, every call panics with the same value.
func OnceFunc(f func()) func() {
	var (
		once  Once
		valid bool
		p     any
	)
	g := func() {
		defer func() {
			p = recover()
			if !valid {
				panic(p)
			}
		}()
		f()
		f = nil
		valid = true
	}
	return func() {
		once.Do(g)
		if !valid {
			panic(p)
		}
	}
}

// OnceValue returns a function that calls f only the first time and
// returns its result every time; if f panics, every call panics with the
// same value.
func OnceValue[T any](f func() T) func() T {
	var (
		once   Once
		valid  bool
		p      any
		result T
	)
	g := func() {
		defer func() {
			p = recover()
			if !valid {
				panic(p)
			}
		}()
		result = f()
		f = nil
		valid = true
	}
	return func() T {
		once.Do(g)
		if !valid {
			panic(p)
		}
		return result
	}
}

// OnceValues is OnceValue for a function of two results.
func OnceValues[T1, T2 any](f func() (T1, T2)) func() (T1, T2) {
	var (
		once  Once
		valid bool
		p     any
		r1    T1
		r2    T2
	)
	g := func() {
		defer func() {
			p = recover()
			if !valid {
				panic(p)
			}
		}()
		r1, r2 = f()
		f = nil
		valid = true
	}
	return func() (T1, T2) {
		once.Do(g)
		if !valid {
			panic(p)
		}
		return r1, r2
	}
}
