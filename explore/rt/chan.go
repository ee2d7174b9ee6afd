package rt

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Goroutines, channels and select. The rewrite turns a go statement into a
// call of Go, every channel operation into Send, Recv, Recv2, Close, Len
// or LenSend, a range over a channel into Range, and a select into the
// same select over channels NewSelect's cases hand out. With no explorer
// running each is the statement or the operation as written, on the same
// channel: rewritten code runs as the original does. Under the explorer
// each is controlled (internal/interleave's chan.go): a go statement
// starts a logical thread, a channel operation is a switch point that may
// block its thread, and the choice among a select's ready cases is part of
// the schedule. make and cap are left as they are: under the explorer a
// channel is still the runtime's, and the explorer keeps its contents.

// controller is what the explorer's scheduler does for goroutines and
// channels. Channels are named by the address of the runtime's channel.
type controller interface {
	Go(f func(), site string) string
	ChanKnown(ch unsafe.Pointer) bool
	ChanAdopt(ch unsafe.Pointer, capacity int, vals []any, closed bool, probe func() error)
	ChanSend(ch unsafe.Pointer, capacity int, v any) bool
	ChanRecv(ch unsafe.Pointer, capacity int) (any, bool)
	ChanClose(ch unsafe.Pointer, capacity int) bool
	ChanLen(ch unsafe.Pointer, capacity int) int
	Select(chans []unsafe.Pointer, caps []int, send []bool, vals []any, hasDefault bool, site string) (int, any, bool)
}

// ctl is the installed scheduler as a controller, or nil when none is
// installed; a scheduler that cannot control what is at site panics.
func ctl(what string) controller {
	s := hooked.Current()
	if s == nil {
		return nil
	}
	c, ok := s.(controller)
	if !ok {
		panic(&UnsupportedError{Site: caller(3), What: what + " (the installed scheduler does not control channels and goroutines)"})
	}
	return c
}

// caller is the file:line skip frames up.
func caller(skip int) string {
	_, file, line, ok := runtime.Caller(skip)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// adopt hands the explorer a channel the run has not used yet: what its
// buffer holds (taken out of it) and whether it is closed, as code outside
// the explorer left it (a channel made before the run; a context's Done,
// made and closed by the standard library), and a probe that tells when
// such code sends on it or closes it later, which the explorer cannot
// see: that run has no verdict.
func adopt[T any](c controller, ch <-chan T) {
	w := word(ch)
	if c.ChanKnown(w) {
		return
	}
	var vals []any
	closed := false
drain:
	for range cap(ch) + 1 {
		select {
		case v, ok := <-ch:
			if !ok {
				closed = true
				break drain
			}
			vals = append(vals, v)
		default:
			break drain
		}
	}
	if closed {
		// Nothing can change a closed channel: nothing to watch.
		c.ChanAdopt(w, cap(ch), vals, closed, nil)
		return
	}
	c.ChanAdopt(w, cap(ch), vals, closed, func() error {
		select {
		case _, ok := <-ch:
			what := "sent on"
			if !ok {
				what = "closed"
			}
			return &UnsupportedError{Site: fmt.Sprintf("chan %p", w), What: "a channel " + what + " by code the explorer does not control (a context's Done, a timer's channel, a test file's code)"}
		default:
			return nil
		}
	})
}

// both is ch as a channel that can be received from, for adopt: the
// explorer's operations never use the runtime's channel, so receiving
// from a send-only one only looks at what outside code left there.
func both[T any](ch chan<- T) <-chan T {
	return *(*<-chan T)(unsafe.Pointer(&ch))
}

// word is the address of the runtime's channel ch is (nil for nil).
func word[C any](ch C) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&ch)) }

// as is the value v of an element type T, from the explorer's any (the
// zero value for nil).
func as[T any](v any) T {
	x, _ := v.(T)
	return x
}

// Go runs f in a new goroutine: f is the go statement at site with its
// function value and arguments already evaluated (the rewrite turns go
// f(x) into Go(site, func() func() { f, a := f, x; return func() { f(a) } }())).
// Under the explorer the goroutine is a logical thread of the run.
func Go(site string, f func()) {
	s := hooked.Current()
	if s == nil {
		go f()
		return
	}
	c, ok := s.(controller)
	if !ok {
		panic(&UnsupportedError{Site: site, What: "go statement (the installed scheduler does not control goroutines)"})
	}
	if why := c.Go(f, site); why != "" {
		panic(&UnsupportedError{Site: site, What: "go statement: " + why})
	}
}

// Send returns the send of a value on ch: the rewrite turns ch <- v into
// Send(ch)(v), so ch is evaluated before v, as Go does, and v is
// converted to the element type as Go converts it.
func Send[T any](ch chan<- T) func(T) {
	return func(v T) {
		c := ctl("channel send")
		if c == nil {
			ch <- v
			return
		}
		adopt(c, both(ch))
		if !c.ChanSend(word(ch), cap(ch), v) {
			sendClosed(v)
		}
	}
}

// sendClosed panics as a send on a closed channel does.
func sendClosed[T any](v T) {
	c := make(chan T, 1)
	close(c)
	c <- v
}

// Recv is <-ch.
func Recv[T any](ch <-chan T) T {
	v, _ := Recv2(ch)
	return v
}

// Recv2 is v, ok := <-ch.
func Recv2[T any](ch <-chan T) (T, bool) {
	c := ctl("channel receive")
	if c == nil {
		v, ok := <-ch
		return v, ok
	}
	adopt(c, ch)
	v, ok := c.ChanRecv(word(ch), cap(ch))
	return as[T](v), ok
}

// Close is close(ch).
func Close[T any](ch chan<- T) {
	c := ctl("close")
	if c == nil || ch == nil {
		close(ch) // a nil channel panics as Go's does
		return
	}
	adopt(c, both(ch))
	if !c.ChanClose(word(ch), cap(ch)) {
		again := make(chan T)
		close(again)
		close(again) // panics: close of closed channel
	}
}

// Len is len(ch) of a channel that can be received from.
func Len[T any](ch <-chan T) int {
	c := ctl("len of a channel")
	if c == nil {
		return len(ch)
	}
	adopt(c, ch)
	return c.ChanLen(word(ch), cap(ch))
}

// LenSend is len(ch) of a send-only channel.
func LenSend[T any](ch chan<- T) int {
	c := ctl("len of a channel")
	if c == nil {
		return len(ch)
	}
	adopt(c, both(ch))
	return c.ChanLen(word(ch), cap(ch))
}

// Iter is a range over a channel: the rewrite turns for v := range ch
// { into for it := Range(ch); it.Next(); { v := it.V;.
type Iter[T any] struct {
	ch <-chan T
	// V is the value the last Next received.
	V T
}

// Range starts a range over ch.
func Range[T any](ch <-chan T) *Iter[T] { return &Iter[T]{ch: ch} }

// Next receives the next value into V, and reports false once the
// channel is closed and drained.
func (it *Iter[T]) Next() bool {
	v, ok := Recv2(it.ch)
	it.V = v
	return ok
}

// Select is one execution of a select statement under the explorer (nil
// with none). The rewrite turns
//
//	select {
//	case v := <-a:
//	case b <- x:
//	default:
//	}
//
// into
//
//	switch s := NewSelect(2, true, site); { default: select {
//	case v := <-SelRecv(s, a):
//	case SelSend(s, b) <- SelValue(s, x):
//	default:
//	}}
//
// so the cases' channels and values are evaluated as Go evaluates them,
// once each, in source order. Under the explorer each case gets a fresh
// channel of its own, and once the last case is evaluated the explorer
// decides the select (which case, if any, and with what value) and makes
// the chosen case's fresh channel, and only it, ready: the select as
// written then takes that case, assigns what it received, and runs its
// body.
type Select struct {
	c          controller
	n          int
	hasDefault bool
	site       string
	chans      []unsafe.Pointer
	caps       []int
	send       []bool
	vals       []any
	ready      []func(v any, ok bool) // makes case i's fresh channel ready
	closed     []func()               // panics as a send of case i on a closed channel
}

// NewSelect begins a select of n cases (not counting a default) at site.
func NewSelect(n int, hasDefault bool, site string) *Select {
	c := ctl("select statement")
	if c == nil {
		return nil
	}
	s := &Select{c: c, n: n, hasDefault: hasDefault, site: site}
	if n == 0 {
		s.decide()
	}
	return s
}

func (s *Select) add(ch unsafe.Pointer, capacity int, send bool, ready func(any, bool), closed func()) {
	s.chans = append(s.chans, ch)
	s.caps = append(s.caps, capacity)
	s.send = append(s.send, send)
	s.vals = append(s.vals, nil)
	s.ready = append(s.ready, ready)
	s.closed = append(s.closed, closed)
}

// evaluated counts a case as evaluated; after the last, the select is
// decided.
func (s *Select) evaluated() {
	if len(s.chans) == s.n {
		s.decide()
	}
}

func (s *Select) decide() {
	k, v, ok := s.c.Select(s.chans, s.caps, s.send, s.vals, s.hasDefault, s.site)
	if k < 0 {
		return
	}
	if s.send[k] && !ok {
		s.closed[k]()
	}
	s.ready[k](v, ok)
}

// SelRecv is the channel of a receive case of s on ch.
func SelRecv[T any](s *Select, ch <-chan T) <-chan T {
	if s == nil {
		return ch
	}
	adopt(s.c, ch)
	f := make(chan T, 1)
	s.add(word(ch), cap(ch), false, func(v any, ok bool) {
		if ok {
			f <- as[T](v)
		} else {
			close(f)
		}
	}, nil)
	s.evaluated()
	return f
}

// SelSend is the channel of a send case of s on ch; SelValue, its value,
// follows it.
func SelSend[T any](s *Select, ch chan<- T) chan<- T {
	if s == nil {
		return ch
	}
	adopt(s.c, both(ch))
	f := make(chan T, 1)
	var zero T
	f <- zero // full: not ready until the case is chosen
	s.add(word(ch), cap(ch), true, func(any, bool) { <-f }, func() {
		var v T
		sendClosed(v)
	})
	return f
}

// SelValue is the value of the send case of s whose channel SelSend
// gave last.
func SelValue[T any](s *Select, v T) T {
	if s == nil {
		return v
	}
	s.vals[len(s.vals)-1] = v
	s.evaluated()
	return v
}
