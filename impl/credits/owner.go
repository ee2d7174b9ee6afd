package credits

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Errors returned by Owner.Call. A refusal by the handler itself is returned
// as the handler's error.
//
// The table and Owner.Call speak one vocabulary in two forms. The table's
// methods answer with a Result because Exhausted, Lost and NoTable are
// ordinary answers of a lock-free table, which a caller branches on (as
// Reserve answers Exhausted under load); Owner.Call is the whole
// request/reply exchange and follows Go's convention of an error for a call
// that did not get its reply. The first three errors are exactly those
// Results (Result.Err); the other three are outcomes only the exchange has.
var (
	ErrExhausted = errors.New("credits: every slot of the class is in use")
	ErrLost      = errors.New("credits: the reservation was lost before enqueue")
	ErrNoTable   = errors.New("credits: the table is closed")
	ErrNoOwner   = errors.New("credits: no owner is running; the reservation was released")
	ErrOwnerGone = errors.New("credits: the owner stopped before replying")
	ErrDeadline  = errors.New("credits: the owner refused the request: its deadline had passed")
	// ErrHandlerPanicked is wrapped by the error Call returns when the
	// handler panicked serving its request (a *HandlerPanic, with the
	// panic's value and stack).
	ErrHandlerPanicked = errors.New("credits: the handler panicked")
)

// HandlerPanic is the error Call returns when the handler panicked while
// serving the request: the owner recovered, failed that one request,
// freed its slot, and went on serving the others. It wraps
// ErrHandlerPanicked.
type HandlerPanic struct {
	Value any    // the value passed to panic
	Stack []byte // the handler goroutine's stack at the panic
}

func (e *HandlerPanic) Error() string {
	return fmt.Sprintf("%v: %v", ErrHandlerPanicked, e.Value)
}

func (e *HandlerPanic) Unwrap() error { return ErrHandlerPanicked }

// Err returns the error Owner.Call reports for r: nil for OK, ErrExhausted,
// ErrLost or ErrNoTable for the refusals.
func (r Result) Err() error {
	switch r {
	case OK:
		return nil
	case Exhausted:
		return ErrExhausted
	case Lost:
		return ErrLost
	case NoTable:
		return ErrNoTable
	}
	panic(fmt.Sprintf("credits: %v is not a result (defect)", r))
}

// Request is the payload Owner.Call stores in a row: the caller's request,
// its deadline on the table's clock, and the one-shot reply channel the
// owner answers on.
type Request[Req, Resp any] struct {
	Body        Req
	HasDeadline bool
	DeadlineMs  int64 // table clock; the owner refuses the request after it
	reply       chan reply[Resp]
}

type reply[Resp any] struct {
	resp Resp
	err  error
}

// Handler serves one request on the owner's goroutine.
type Handler[Req, Resp any] func(ctx context.Context, req Req) (Resp, error)

// Owner drains a table's enqueued rows on a fixed poll (C15): for each it
// takes the row, refuses it if its deadline has passed or else hands it to the handler,
// replies to the caller, and finishes the row. The slot stays held until
// then, even when the caller timed out or exited first: freeing a row is the
// owner's act of consuming it, not the caller's. There is no message from
// caller to owner at all; the table is the only channel.
//
// When Run returns the owner is dead and closes the table with it.
//
// A handler that panics fails only its own request: the owner recovers,
// the caller gets a *HandlerPanic (wrapping ErrHandlerPanicked, with the
// panic's value and stack), the row is finished and its slot freed like
// any served row's, and the owner serves the next. A panic is a bug of the
// handler, and the owner does not hide it: it reaches the caller, who
// should log it. (Before, a panic ended Run's goroutine: under Start the
// process, under a recovering Run the table, for good.)
//
// Run serves; Start runs it on a goroutine of its own and returns once it
// serves, so that a Call made after Start finds an owner (a Call before
// Run has started answers ErrNoOwner). The handler runs on the owner's
// goroutine, one request at a time, and a row's slot is freed only when
// its handler returns: a slow handler holds its slot and delays every row
// behind it, and under sustained load the class fills and Call answers
// ErrExhausted. That is the admission the table exists for; a program that
// wants several handlers at once runs several owners, each over a table
// of its own, and spreads its calls over them.
type Owner[Req, Resp any] struct {
	table   *Table[*Request[Req, Resp]]
	handle  Handler[Req, Resp]
	poll    time.Duration
	started sync.Once
	running atomic.Bool
	done    chan struct{}
	polled  []Entry[*Request[Req, Resp]] // the last poll's list, reused by the next (Run's goroutine only)
}

// NewOwner returns an owner for table that polls every poll interval and
// serves requests with handle. It does nothing until Run. A nil table, a
// nil handle or a poll interval <= 0 is a defect: NewOwner panics, rather
// than the owner's goroutine later.
func NewOwner[Req, Resp any](table *Table[*Request[Req, Resp]], poll time.Duration, handle Handler[Req, Resp]) *Owner[Req, Resp] {
	switch {
	case table == nil:
		panic("credits: NewOwner needs a table, not nil (defect)")
	case handle == nil:
		panic("credits: NewOwner needs a handler, not nil (defect)")
	case poll <= 0:
		panic("credits: NewOwner needs a poll interval > 0 (defect)")
	}
	return &Owner[Req, Resp]{table: table, handle: handle, poll: poll, done: make(chan struct{})}
}

// Run drains the table every poll interval until ctx is done, then closes
// the table and returns ctx's error. Callers still waiting get ErrOwnerGone.
// Run may be called once (Start counts as a call); a second call is a
// defect and panics.
func (o *Owner[Req, Resp]) Run(ctx context.Context) error {
	o.begin("credits: Owner.Run called twice (defect)")
	return o.serve(ctx)
}

// Start starts Run on a goroutine of its own and returns once the owner
// serves. stop cancels it, waits for Run to return (the table is closed by
// then) and returns Run's error. Start and Run together may be called
// once; a second call is a defect and panics, in the caller.
func (o *Owner[Req, Resp]) Start(ctx context.Context) (stop func() error) {
	o.begin("credits: Owner.Start called after the owner was started (defect)")
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- o.serve(ctx) }()
	return func() error {
		cancel()
		return <-errc
	}
}

// begin marks the owner as serving, once: a second Run or Start panics
// with defect.
func (o *Owner[Req, Resp]) begin(defect string) {
	// A once-only guard, not a row transition: sync.Once, whose first Do
	// alone runs f, rather than a compare-and-swap of our own that no
	// explorer scenario drives (Run is a loop on a real ticker).
	first := false
	o.started.Do(func() { first = true })
	if !first {
		panic(defect)
	}
	// Stored before serve's goroutine exists: a Call that Start's return
	// happens before sees it.
	o.running.Store(true)
}

// serve is Run's loop, after begin.
func (o *Owner[Req, Resp]) serve(ctx context.Context) error {
	defer func() {
		o.running.Store(false)
		o.table.Close()
		close(o.done)
	}()
	tick := time.NewTicker(o.poll)
	defer tick.Stop()
	for {
		o.drain(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Running reports whether Run is serving: after it started and before it
// returned. Call releases its reservation when it finds no owner running.
func (o *Owner[Req, Resp]) Running() bool { return o.running.Load() }

// Done is closed when Run has returned and the table is closed.
func (o *Owner[Req, Resp]) Done() <-chan struct{} { return o.done }

// drain serves every row enqueued at the start of this poll (C15): take,
// reply, then finish, so the slot is freed only once the row is consumed.
func (o *Owner[Req, Resp]) drain(ctx context.Context) {
	o.polled = o.table.AppendEnqueued(o.polled[:0])
	defer clear(o.polled) // keep no request reachable between polls
	for _, e := range o.polled {
		if ctx.Err() != nil {
			return
		}
		req, ok := o.table.Take(e.Token)
		if !ok {
			continue // finished already, or the table closed
		}
		var r reply[Resp]
		if req.HasDeadline && o.table.now() > req.DeadlineMs {
			r.err = ErrDeadline
		} else {
			r.resp, r.err = o.serve1(ctx, req.Body)
		}
		req.reply <- r // buffered: never blocks, even if the caller left
		o.table.Finish(e.Token)
	}
}

// serve1 runs the handler on req, turning a panic in it into a
// *HandlerPanic: one request fails, the owner goes on.
func (o *Owner[Req, Resp]) serve1(ctx context.Context, req Req) (resp Resp, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero Resp
			resp, err = zero, &HandlerPanic{Value: v, Stack: debug.Stack()}
		}
	}()
	return o.handle(ctx, req)
}

// Call reserves a slot of class c for h, enqueues body, and waits for the
// owner's reply or for ctx (C15). If ctx is done first, Call returns ctx's error at
// once but the slot stays held until the owner has taken and finished the
// row. A caller that finds no owner running releases its reservation and
// returns ErrNoOwner. A context that is already done is refused before
// anything is reserved (golang/go#63615 is the bug of doing otherwise).
func (o *Owner[Req, Resp]) Call(ctx context.Context, h *Holder, c Class, body Req) (Resp, error) {
	var zero Resp
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	tok, res := o.table.Reserve(h, c)
	if res != OK {
		return zero, res.Err()
	}
	if !o.running.Load() {
		o.table.Release(h, tok)
		return zero, ErrNoOwner
	}
	req := &Request[Req, Resp]{Body: body, reply: make(chan reply[Resp], 1)}
	if d, ok := ctx.Deadline(); ok {
		req.HasDeadline, req.DeadlineMs = true, o.table.now()+time.Until(d).Milliseconds()
	}
	if res := o.table.Enqueue(h, tok, req); res != OK {
		return zero, res.Err()
	}
	select {
	case r := <-req.reply:
		return r.resp, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-o.done:
		select {
		case r := <-req.reply: // replied just before stopping
			return r.resp, r.err
		default:
			return zero, ErrOwnerGone
		}
	}
}
