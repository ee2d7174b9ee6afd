package rt

import (
	"fmt"
	"path/filepath"
	"runtime"
	"time"
	"unsafe"

	"github.com/tollgate/tollgate/explore/internal/vclock"
)

// Timers on the virtual clock. The rewrite turns time.NewTimer, After,
// AfterFunc, NewTicker and Tick into this file's functions, and a call of
// a *time.Timer's or *time.Ticker's Stop or Reset into TimerStop,
// TimerReset, TickerStop or TickerReset. With no explorer running each is
// the time package's own. Under the explorer a timer is the run's
// (internal/interleave's timer.go): its firing is a step of a thread of
// its own that interleaves with the others', on the virtual clock, and its
// channel is controlled like any other. The *time.Timer handed out then is
// not the runtime's (its C is the explorer's channel): only the rewritten
// Stop and Reset may be called on it.

// timers is what the explorer's scheduler does for timers.
type timers interface {
	TimerStart(key, ch unsafe.Pointer, d, period time.Duration, val func() any, f, inline func(), clock interface {
		Elapsed() time.Duration
		AdvanceTo(d time.Duration)
	}, site string) string
	TimerStop(key unsafe.Pointer, quiet bool) (known, pending bool)
	TimerReset(key unsafe.Pointer, d, period time.Duration) (known, pending bool)
}

// clock is the virtual clock as the explorer's timers read and move it.
type clock struct{}

func (clock) Elapsed() time.Duration { return vclock.Elapsed() }
func (clock) AdvanceTo(d time.Duration) {
	vclock.AdvanceTo(vclock.Now().Add(d - vclock.Elapsed()))
}

// timerCtl is the installed scheduler as a controller of timers, or nil
// when none is installed; a scheduler that cannot control timers, or one
// running with the virtual clock off, panics naming what at site.
func timerCtl(what, site string) timers {
	s := ctl(what)
	if s == nil {
		return nil
	}
	if !vclock.On() {
		panic(&UnsupportedError{Site: site, What: what + " (the virtual clock is off)"})
	}
	t, ok := s.(timers)
	if !ok {
		panic(&UnsupportedError{Site: site, What: what + " (the installed scheduler does not control timers)"})
	}
	return t
}

// site is the caller's caller's file:line, with the file's directory, for
// the name of a timer's thread.
func site(skip int) string {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(file)), filepath.Base(file), line)
}

// start makes a timer of the run on t, panicking as Unsupported does when
// the explorer cannot have one here.
func start(t timers, key, ch unsafe.Pointer, d, period time.Duration, f, inline func(), what, at string) {
	var val func() any
	if ch != nil {
		val = func() any { return vclock.Now() }
	}
	if why := t.TimerStart(key, ch, d, period, val, f, inline, clock{}, at); why != "" {
		panic(&UnsupportedError{Site: at, What: what + ": " + why})
	}
}

// NewTimer is time.NewTimer.
func NewTimer(d time.Duration) *time.Timer {
	at := site(1)
	t := timerCtl("time.NewTimer", at)
	if t == nil {
		return time.NewTimer(d)
	}
	ch := make(chan time.Time, 1)
	tm := &time.Timer{C: ch}
	start(t, unsafe.Pointer(tm), word(ch), d, 0, nil, nil, "time.NewTimer", at)
	return tm
}

// After is time.After.
func After(d time.Duration) <-chan time.Time {
	at := site(1)
	t := timerCtl("time.After", at)
	if t == nil {
		return time.After(d)
	}
	ch := make(chan time.Time, 1)
	tm := &time.Timer{C: ch}
	start(t, unsafe.Pointer(tm), word(ch), d, 0, nil, nil, "time.After", at)
	return ch
}

// AfterFunc is time.AfterFunc: under the explorer f starts as a
// goroutine of the run when the timer fires.
func AfterFunc(d time.Duration, f func()) *time.Timer {
	at := site(1)
	t := timerCtl("time.AfterFunc", at)
	if t == nil {
		return time.AfterFunc(d, f)
	}
	tm := &time.Timer{}
	start(t, unsafe.Pointer(tm), nil, d, 0, f, nil, "time.AfterFunc", at)
	return tm
}

// NewTicker is time.NewTicker.
func NewTicker(d time.Duration) *time.Ticker {
	if d <= 0 {
		panic("non-positive interval for NewTicker")
	}
	at := site(1)
	t := timerCtl("time.NewTicker", at)
	if t == nil {
		return time.NewTicker(d)
	}
	ch := make(chan time.Time, 1)
	tk := &time.Ticker{C: ch}
	start(t, unsafe.Pointer(tk), word(ch), d, d, nil, nil, "time.NewTicker", at)
	return tk
}

// Tick is time.Tick.
func Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	at := site(1)
	t := timerCtl("time.Tick", at)
	if t == nil {
		return time.Tick(d)
	}
	ch := make(chan time.Time, 1)
	tk := &time.Ticker{C: ch}
	start(t, unsafe.Pointer(tk), word(ch), d, d, nil, nil, "time.Tick", at)
	return ch
}

// TimerStop is t.Stop().
func TimerStop(t *time.Timer) bool {
	if c := timerCtl("(*time.Timer).Stop", site(1)); c != nil {
		if known, pending := c.TimerStop(unsafe.Pointer(t), false); known {
			return pending
		}
	}
	return t.Stop()
}

// TimerReset is t.Reset(d).
func TimerReset(t *time.Timer, d time.Duration) bool {
	if c := timerCtl("(*time.Timer).Reset", site(1)); c != nil {
		if known, pending := c.TimerReset(unsafe.Pointer(t), d, 0); known {
			return pending
		}
	}
	return t.Reset(d)
}

// TickerStop is t.Stop().
func TickerStop(t *time.Ticker) {
	if c := timerCtl("(*time.Ticker).Stop", site(1)); c != nil {
		if known, _ := c.TimerStop(unsafe.Pointer(t), false); known {
			return
		}
	}
	t.Stop()
}

// TickerReset is t.Reset(d).
func TickerReset(t *time.Ticker, d time.Duration) {
	if d <= 0 {
		panic("non-positive interval for Ticker.Reset")
	}
	if c := timerCtl("(*time.Ticker).Reset", site(1)); c != nil {
		if known, _ := c.TimerReset(unsafe.Pointer(t), d, d); known {
			return
		}
	}
	t.Reset(d)
}

// TimerStopFunc is the method value t.Stop.
func TimerStopFunc(t *time.Timer) func() bool {
	return func() bool { return TimerStop(t) }
}

// TimerResetFunc is the method value t.Reset.
func TimerResetFunc(t *time.Timer) func(time.Duration) bool {
	return func(d time.Duration) bool { return TimerReset(t, d) }
}

// TickerStopFunc is the method value t.Stop.
func TickerStopFunc(t *time.Ticker) func() {
	return func() { TickerStop(t) }
}

// TickerResetFunc is the method value t.Reset.
func TickerResetFunc(t *time.Ticker) func(time.Duration) {
	return func(d time.Duration) { TickerReset(t, d) }
}
