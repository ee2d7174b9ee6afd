// Package vclock is the virtual clock of an exploration: the time that
// explore/rt's Now, Since, Until and Sleep read and move while the explorer
// runs code rewritten for it. The explorer starts it at a fixed instant,
// its clock thread advances it tick by tick, and a sleeping thread moves it
// forward; nothing reads the machine's clock while it is on.
//
// Only one logical thread runs at a time under the explorer, and every
// reading or move is one switch point on the clock's word, so the clock is
// a plain variable: the explorer orders the steps that touch it.
package vclock

import (
	"sync/atomic"
	"time"
	"unsafe"
)

var (
	on    atomic.Bool
	base  time.Time
	nanos int64 // time since base
)

// Start turns the virtual clock on at t (and its reading to t).
func Start(t time.Time) {
	base, nanos = t, 0
	on.Store(true)
}

// Stop turns it off: explore/rt reads the machine's clock again.
func Stop() { on.Store(false) }

// On reports whether the virtual clock is on.
func On() bool { return on.Load() }

// Word is the clock's word: every reading and every move is an operation
// on it, so a reading and a move of the clock do not commute.
func Word() unsafe.Pointer { return unsafe.Pointer(&nanos) }

// Now is the virtual time.
func Now() time.Time { return base.Add(time.Duration(nanos)) }

// Elapsed is the virtual time since the start.
func Elapsed() time.Duration { return time.Duration(nanos) }

// Advance moves the clock forward by d (d ≥ 0) and returns the new time.
func Advance(d time.Duration) time.Time {
	if d < 0 {
		panic("vclock: the virtual clock never goes back (Advance with a negative duration)")
	}
	nanos += int64(d)
	return Now()
}

// AdvanceTo moves the clock to t if t is later, and returns the time.
func AdvanceTo(t time.Time) time.Time {
	if d := t.Sub(base); int64(d) > nanos {
		nanos = int64(d)
	}
	return Now()
}
