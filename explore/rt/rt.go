// Package rt is what code rewritten for exploration calls in place of the
// time functions and of the constructs the explorer cannot control.
//
// tollgate explore builds the code under test through the go command's
// -overlay flag, with each file rewritten (explore/rewrite): time.Now,
// time.Since, time.Until and time.Sleep become this package's, a go
// statement, a channel operation or a select gets a call of Unsupported in
// front of it, and each rewritten package registers itself with Rewritten
// at init. With no explorer running, every function here is the time
// package's own and Unsupported does nothing, so the rewritten code
// behaves exactly as before.
package rt

import (
	"fmt"
	"sort"
	"sync"
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
	What string // e.g. "go statement", "select statement", "time.NewTimer"
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

// plainWord is the word every plain store reports: a plain store is
// dependent on every step of every other thread (plain loads are no
// switch points), so which word it writes does not matter to the
// explorer, and the trace names the line.
var plainWord byte

// PlainStore is the switch point the rewrite puts before every plain
// (non-atomic) store that may write memory another thread can reach: a
// field, an element, a pointer's target, a package-level variable. So
// another thread may run between an atomic operation or an unlock and a
// later plain store (a flag set before the value it announces, say).
// Under the explorer it pauses the thread; otherwise it does nothing.
func PlainStore() {
	s := hooked.Current()
	if s == nil {
		return
	}
	w := unsafe.Pointer(&plainWord)
	s.Before(w, hooked.Plain)
	s.After(hooked.Access{Word: w, Op: hooked.Plain, OK: true, Site: hooked.Site(1)})
}
