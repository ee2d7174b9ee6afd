// Package rt is what code rewritten for exploration calls in place of the
// time functions and of the constructs the explorer cannot control.
//
// tollgate explore builds the code under test through the go command's
// -overlay flag, with each file rewritten (explore/rewrite): time.Now,
// time.Since, time.Until and time.Sleep become this package's, a go
// statement becomes Go, a channel operation Send, Recv, Recv2, Close, Len
// or LenSend, a range over a channel Range, a select the same select over
// the channels NewSelect's cases give (chan.go), the timers and their
// Stop and Reset this package's (timer.go), the context functions twins
// (context.go); a construct the explorer cannot control (runtime.Gosched,
// reflect.Select) gets a call of Unsupported in front of it; and each
// rewritten package registers itself with Rewritten at init. With no
// explorer running, every function here is the time or context package's
// own or the statement as written, and Unsupported does nothing, so the
// rewritten code behaves exactly as before.
package rt

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tollgate/tollgate/explore/internal/vclock"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Now returns the current time: the virtual clock's while the explorer
// runs with it on, the machine's otherwise. Under the explorer a reading is
// a switch point (an operation on the clock's word), so another thread, or
// the clock thread's tick, may run between the reading and what the caller
// does with it.
func Now() time.Time {
	s := hooked.Current()
	if s == nil || !vclock.On() {
		return time.Now()
	}
	return read(s, hooked.Site(1))
}

func read(s hooked.Scheduler, site uintptr) time.Time {
	w := vclock.Word()
	s.Before(w, hooked.Now)
	t := vclock.Now()
	s.After(hooked.Access{Word: w, Op: hooked.Now, Old: vclock.Elapsed(), OK: true, Site: site})
	return t
}

// Since is time.Since on the clock Now reads.
func Since(t time.Time) time.Duration {
	s := hooked.Current()
	if s == nil || !vclock.On() {
		return time.Since(t)
	}
	return read(s, hooked.Site(1)).Sub(t)
}

// Until is time.Until on the clock Now reads.
func Until(t time.Time) time.Duration {
	s := hooked.Current()
	if s == nil || !vclock.On() {
		return time.Until(t)
	}
	return t.Sub(read(s, hooked.Site(1)))
}

// Sleep pauses the calling thread for at least d. Under the explorer it
// takes two steps: it reads the virtual clock (start), then moves the clock
// to start+d unless it is later already. Other threads may run between the
// two, and see the time before the sleep ends; a thread that runs after
// the second sees it ended. Two threads that sleep at once both wake at
// their own start+d.
func Sleep(d time.Duration) {
	s := hooked.Current()
	if s == nil || !vclock.On() {
		time.Sleep(d)
		return
	}
	site := hooked.Site(1)
	start := read(s, site)
	if d <= 0 {
		return
	}
	w := vclock.Word()
	s.Before(w, hooked.Tick)
	old := vclock.Elapsed()
	vclock.AdvanceTo(start.Add(d))
	s.After(hooked.Access{Word: w, Op: hooked.Tick, Old: old, New: vclock.Elapsed(), OK: true, Site: site})
}

// UnsupportedError is the panic value of Unsupported: the code under test
// reached a construct the explorer cannot control.
type UnsupportedError struct {
	Site string // file:line of the construct
	What string // e.g. "time.NewTimer", "runtime.Gosched", "go statement" (of a builtin)
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: %s: the explorer cannot control it (it would run outside the schedule), so no verdict is given", e.Site, e.What)
}

// Unsupported is called right before a construct the explorer cannot
// control. Under the explorer it panics with an *UnsupportedError, so the
// run ends with that construct named instead of running it outside the
// schedule; otherwise it does nothing.
func Unsupported(site, what string) {
	if hooked.Current() != nil {
		panic(&UnsupportedError{Site: site, What: what})
	}
}

var (
	mu        sync.Mutex
	rewritten = map[string]bool{}
)

// Rewritten records that the package with import path pkg was built
// rewritten for exploration. Each rewritten package calls it from an init
// function the rewrite adds.
func Rewritten(pkg string) {
	mu.Lock()
	defer mu.Unlock()
	rewritten[pkg] = true
}

// IsRewritten reports whether the package with import path pkg is linked
// into this binary rewritten for exploration.
func IsRewritten(pkg string) bool {
	mu.Lock()
	defer mu.Unlock()
	return rewritten[pkg]
}

// Packages lists the rewritten packages linked into this binary, sorted.
func Packages() []string {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	for p := range rewritten {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// storeSwitch makes every plain store a switch point (SetStoreSwitch).
var storeSwitch atomic.Bool

// SetStoreSwitch makes every plain store the rewritten code reports a
// switch point too (on), or only a report (off, the default), and returns
// the previous setting. A scheduler that detects data races does not need
// them: a schedule that would show a store's effect late shows the store
// racing with another thread's access. Under a scheduler that does not
// (not a hooked.Racer), every plain store is a switch point whatever the
// setting, as plain stores were before the race detector. The setting
// changes the schedules: a schedule replays under the setting it was found
// with.
func SetStoreSwitch(on bool) bool { return storeSwitch.Swap(on) }

// plain reports a plain access of size bytes at p to s, a store when
// write, from the code at site.
func plain(s hooked.Scheduler, p unsafe.Pointer, size uintptr, write bool, site uintptr) {
	r, racer := s.(hooked.Racer)
	if write && (!racer || storeSwitch.Load()) {
		s.Before(p, hooked.Plain)
		s.After(hooked.Access{Word: p, Op: hooked.Plain, OK: true, Site: site})
	}
	if racer {
		r.Plain(p, size, write, site)
	}
}

// plainWord is the word PlainStore reports.
var plainWord byte

// PlainStore is the switch point the rewrite puts before a statement that
// stores to shared memory in a file older than go1.18, whose accesses
// cannot be reported (PlainWrite is generic): so another thread may run
// between an atomic operation or an unlock and the store. It reports no
// address (the same word for every store) and is dependent on every step
// of another thread. Under the explorer it pauses the thread; otherwise
// it does nothing.
func PlainStore() {
	s := hooked.Current()
	if s == nil {
		return
	}
	w := unsafe.Pointer(&plainWord)
	s.Before(w, hooked.Plain)
	s.After(hooked.Access{Word: w, Op: hooked.Plain, OK: true, Site: hooked.Site(1)})
}

// PlainLoad reports a plain (non-atomic) load of *p, about to be made, to
// the explorer, and returns p: the rewrite turns every load of memory
// another thread may reach (a field, an element, a pointer's target, a
// package-level or captured variable) into *PlainLoad(&x), so that the
// load is reported where Go makes it. It is no switch point. With no
// explorer running it returns p.
func PlainLoad[T any](p *T) *T {
	if s := hooked.Current(); s != nil {
		plain(s, unsafe.Pointer(p), unsafe.Sizeof(*p), false, hooked.Site(1))
	}
	return p
}

// PlainWrite reports a plain store to *p, about to be made, and returns
// p: the rewrite turns a store to shared memory into *PlainWrite(&x) = v,
// and x++ into *PlainWrite(PlainLoad(&x))++. It is a switch point only as
// SetStoreSwitch says.
func PlainWrite[T any](p *T) *T {
	if s := hooked.Current(); s != nil {
		plain(s, unsafe.Pointer(p), unsafe.Sizeof(*p), true, hooked.Site(1))
	}
	return p
}

// Store stores v to *p and reports it as PlainWrite does: the rewrite
// turns x = f() into Store(&x, f()) when x is shared, so that the store
// is reported after f has run (a lock it takes, an atomic it loads), not
// before.
func Store[T any](p *T, v T) {
	if s := hooked.Current(); s != nil {
		plain(s, unsafe.Pointer(p), unsafe.Sizeof(*p), true, hooked.Site(1))
	}
	*p = v
}

// mapWord is the address of m's header (the runtime's map structure), the
// word every read and write of m is an access of; nil for a nil map.
func mapWord[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// MapRead reports a read of the map m (an index, len, a range) and
// returns m: m[k] is rewritten MapRead(m)[k]. A nil map is no access.
func MapRead[M ~map[K]V, K comparable, V any](m M) M {
	if s := hooked.Current(); s != nil {
		if w := mapWord(m); w != nil {
			plain(s, w, unsafe.Sizeof(uintptr(0)), false, hooked.Site(1))
		}
	}
	return m
}

// MapWrite reports a write of the map m (an assignment to an element,
// delete, clear) and returns m.
func MapWrite[M ~map[K]V, K comparable, V any](m M) M {
	if s := hooked.Current(); s != nil {
		if w := mapWord(m); w != nil {
			plain(s, w, unsafe.Sizeof(uintptr(0)), true, hooked.Site(1))
		}
	}
	return m
}

// LoadElems reports a load of every element of s and returns s: a range
// over a slice with a value variable is rewritten range LoadElems(s), the
// loads reported when the loop starts (a loop left early reports loads it
// did not make).
func LoadElems[S ~[]E, E any](s S) S {
	if sch := hooked.Current(); sch != nil {
		site := hooked.Site(1)
		for i := range s {
			plain(sch, unsafe.Pointer(&s[i]), unsafe.Sizeof(s[i]), false, site)
		}
	}
	return s
}

// StartClock turns the virtual clock on at t, reading t, and StopClock
// turns it off. Package explore starts it in every run of a Spec; another
// explorer that runs rewritten code under its own scheduler calls them
// around its runs (the tables' explorer, internal/interleave, runs the
// explored copy of impl/credits's Owner, whose ticker and contexts are
// timers of the run).
func StartClock(t time.Time) { vclock.Start(t) }

// StopClock turns the virtual clock off: Now and the timers are the
// machine's again.
func StopClock() { vclock.Stop() }

// ClockWord is the virtual clock's word, the one every reading and move of
// it operates on: for a tracer that names it.
func ClockWord() unsafe.Pointer { return vclock.Word() }
