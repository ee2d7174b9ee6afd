package interleave

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tollgate/tollgate/explore/rt"
	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/internal/layout"
	explored "github.com/tollgate/tollgate/internal/mutants/explored/credits"
)

// The Owner's scenarios. impl/credits's Owner is no table transition: Run
// is a loop on a ticker around a handler, Start runs it on a goroutine,
// Call waits in a select for the reply, the context or the owner's end.
// Its explored copy (internal/mutants/explored/credits/owner.go) is
// rewritten as tollgate explore rewrites code (explore/rewrite): its go
// statement, channels, select, ticker, context, sync.Once and atomics are
// switch points and happens-before edges of the run, and its plain
// accesses are checked by the race detector, over the explored table. So
// a run interleaves the callers, the owner's goroutine, its ticker, the
// callers' deadlines and a stop at every switch point, within the bound.
//
// A scenario's threads are words of a small alphabet (ownerOp): start or
// run the owner; call it with a context that is Background, already
// cancelled, cancelled by another thread while the call may wait, or one
// with a deadline half a poll on, with a request its handler answers or
// panics on; stop it, wait on its Done, close its table under it, read
// Running. The two hand-written scenarios come first, then the generated
// family (ownerFamily).
//
// A deadline half a poll on is the call's own millisecond on the table's
// clock (Call rounds the time left down to milliseconds), so a poll after
// the call's refuses it with ErrDeadline; the context's timer fires at
// half a poll, before that poll's tick, so by then its caller has left
// with context.DeadlineExceeded, and the owner's first poll, at the
// call's millisecond, may still serve it.
//
// Each run checks C15 (spec/credits.md §6, the Owner's doc) on the
// answers and on the table the run leaves:
//   - a Call whose context was already done answers its error and
//     reserves nothing (no generation of any slot was spent on it);
//   - a Call that answered without error got the handler's answer to its
//     own request; one whose handler panicked got a *HandlerPanic that
//     wraps ErrHandlerPanicked and carries the panic's value; ErrDeadline
//     answers only a request with a deadline, which the handler never
//     saw; ErrOwnerGone, ErrNoOwner and ErrNoTable answer only requests
//     the handler never saw; a context's error answers only a call whose
//     context could be done;
//   - the handler never serves a request whose deadline had passed on the
//     table's clock when the owner took it (the owner refuses it);
//   - a Background Call that its own thread's Start returned before, and
//     its own stop comes after, gets its reply (the owner runs through
//     it; a panic on an earlier request does not stop it), unless a
//     thread closes the table under the owner;
//   - stop and Run return context.Canceled; once Run has returned, or Done
//     is closed, Running answers false and the table is closed; Running
//     answers true between a thread's Start and its stop;
//   - when the run ends (the owner stopped), every row the owner took is
//     finished, so its slot free: none is left processing (unless a
//     thread closed the table, which makes the owner's finish a no-op), no
//     enqueued row holds a request the owner replied to, and no row is
//     left reserved but by a Call that answered ErrNoTable.
//
// Every goroutine has ended when the threads are done (a leak fails the
// run); a panic of the owner's goroutine fails it too.

// ownerOp is one operation of an owner scenario's thread.
type ownerOp struct {
	// kind: "start" (Start, in the thread), "run" (Run, which returns when
	// a stop cancels its context), "call", "stop" (Start's stop, or the
	// cancel of Run's context), "cancel" (of call body's context), "done"
	// (wait on Done), "close" (the table's Close, under the owner),
	// "running".
	kind string
	body int    // call: the request; cancel: the call whose context it cancels
	ctx  string // call: "bg", "cancelled" (done before the call), "cancel" (a cancel op's), "deadline" (half a poll on)
	hand string // call: what the handler does with it: "answer" or "panic"
}

// ownerPoll is the explored owner's poll: a ticker on the virtual clock.
const ownerPoll = time.Millisecond

// ownerEpoch is where the virtual clock of an owner scenario starts.
var ownerEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ownerCancelled is a context that was done before any call.
var ownerCancelled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// OwnerScenarios are the Owner's scenarios of the default run.
func OwnerScenarios() []Scenario {
	start, stop, running := ownerOp{kind: "start"}, ownerOp{kind: "stop"}, ownerOp{kind: "running"}
	call := func(b int) ownerOp { return ownerOp{kind: "call", body: b, ctx: "bg", hand: "answer"} }
	return append([]Scenario{
		ownerScenario("cr-owner-call-vs-stop",
			"a Call racing the owner's stop: its reply, the owner's end (Done), the table's close and running's store on the way out (C15)",
			true, []ownerOp{call(1)}, []ownerOp{stop}),
		ownerScenario("cr-owner-start-vs-call",
			"Start, then a Call that must find the owner running, while another thread reads Running as the owner starts (C15)",
			false, []ownerOp{start, call(1), stop}, []ownerOp{running}),
	}, ownerFamily()...)
}

// ownerScenario builds an owner scenario: started, the owner is started
// in the setup (its stop is the threads' stop).
func ownerScenario(name, race string, started bool, threads ...[]ownerOp) Scenario {
	return Scenario{Name: name, Race: race, Primitive: Credits, own: &ownerScript{started: started, threads: threads}}
}

type ownerScript struct {
	started bool
	threads [][]ownerOp
}

// has reports whether a thread of sc does an operation of kind.
func (sc *ownerScript) has(kind string) bool {
	for _, ops := range sc.threads {
		for _, op := range ops {
			if op.kind == kind {
				return true
			}
		}
	}
	return false
}

// calls are the call operations of sc, by request.
func (sc *ownerScript) calls() map[int]ownerOp {
	m := map[int]ownerOp{}
	for _, ops := range sc.threads {
		for _, op := range ops {
			if op.kind == "call" {
				m[op.body] = op
			}
		}
	}
	return m
}

// ownerRun is one run's owner and what it answered.
type ownerRun struct {
	tab       *explored.Table[*explored.Request[int, int]]
	owner     *explored.Owner[int, int]
	stop      func() error
	runCancel context.CancelFunc
	ctxs      map[int]context.Context    // the "cancel" calls' contexts, by request
	cancels   map[int]context.CancelFunc // and their cancels
	deadlines map[int]int64              // the "deadline" calls' deadlines, ms on the table's clock
	served    []int                      // the handler's requests, in order (the owner's goroutine)
	late      []string                   // requests the handler served after their deadline
	res       [][]ownerRes
}

type ownerRes struct {
	resp    int
	err     error
	running bool // running: its answer; run, done: Running after
	closed  bool // run, done: the table's Closed after
	done    bool
}

// ownerPanic is the value the handler panics with on request b.
func ownerPanic(b int) string { return fmt.Sprintf("request %d panicked", b) }

// ownerOps is the program of an owner scenario.
func ownerOps(s Scenario) *Ops {
	sc := s.own
	r := &ownerRun{}
	o := &Ops{Name: s.Name, Threads: len(sc.threads), Replay: "tollgate explore -scenario " + s.Name + " -replay %s"}
	o.Begin = func() [][]func() { return r.begin(sc) }
	o.End = func(_ [][][2]int64, _ string) (Kind, string, []string) {
		rt.StopClock()
		msg := r.check(sc)
		if left := r.left(sc); left != "" {
			msg = strings.Join(slices.DeleteFunc([]string{msg, left}, func(s string) bool { return s == "" }), "; ")
		}
		if msg != "" {
			return KindInvariant, "C15: " + msg, nil
		}
		return "", "", nil
	}
	o.Outcome = func() string { return fmt.Sprint(r.res, r.served) }
	o.Call = func(t, i int) string { return sc.threads[t][i].trace() }
	o.Ret = func(t, i int) string { return r.res[t][i].text(sc.threads[t][i]) }
	return o
}

// begin sets up one run of sc (the clock, the table, the owner, the calls'
// contexts) and returns its threads' operations.
func (r *ownerRun) begin(sc *ownerScript) [][]func() {
	rt.StartClock(ownerEpoch)
	// The table's clock is the run's virtual one, as every other clock
	// reading of an explored run (spec/explore.md §4): the Owner's Call
	// enqueues with the table's own clock.
	r.tab = explored.New[*explored.Request[int, int]](explored.WithClock(func() int64 { return rt.Now().UnixMilli() }))
	r.served, r.late = r.served[:0], r.late[:0]
	r.deadlines = map[int]int64{}
	r.owner = explored.NewOwner(r.tab, ownerPoll, r.handler(sc.calls()))
	r.stop, r.runCancel = nil, nil
	var runCtx context.Context
	if sc.has("run") {
		runCtx, r.runCancel = rt.WithCancel(context.Background())
	}
	r.ctxs, r.cancels = map[int]context.Context{}, map[int]context.CancelFunc{}
	for b, op := range sc.calls() {
		if op.ctx == "cancel" {
			r.ctxs[b], r.cancels[b] = rt.WithCancel(context.Background())
		}
	}
	if sc.started {
		r.stop = r.owner.Start(context.Background())
	}
	r.res = make([][]ownerRes, len(sc.threads))
	out := make([][]func(), len(sc.threads))
	for t, ops := range sc.threads {
		r.res[t] = make([]ownerRes, len(ops))
		h := credits.NewHolder()
		for i, op := range ops {
			res := &r.res[t][i]
			out[t] = append(out[t], func() {
				defer func() { res.done = true }()
				r.do(op, res, h, runCtx)
			})
		}
	}
	return out
}

// handler is the owner's handler: it records each request it serves (and
// one served after its deadline), panics where the call says so, and
// answers ten times the request.
func (r *ownerRun) handler(calls map[int]ownerOp) func(context.Context, int) (int, error) {
	return func(_ context.Context, req int) (int, error) {
		r.served = append(r.served, req)
		if d, ok := r.deadlines[req]; ok {
			// The owner took the row just now: nothing but the owner's
			// goroutine moves the clock while it runs.
			if now := rt.Now().UnixMilli(); now > d {
				r.late = append(r.late, fmt.Sprintf("the handler served request %d at %d ms, after its deadline (%d ms): the owner must refuse it with ErrDeadline", req, now-ownerEpoch.UnixMilli(), d-ownerEpoch.UnixMilli()))
			}
		}
		if calls[req].hand == "panic" {
			panic(ownerPanic(req))
		}
		return 10 * req, nil
	}
}

// do runs one operation of a thread whose holder is h, its answer to res.
func (r *ownerRun) do(op ownerOp, res *ownerRes, h *credits.Holder, runCtx context.Context) {
	switch op.kind {
	case "start":
		r.stop = r.owner.Start(context.Background())
	case "run":
		res.err = r.owner.Run(runCtx)
		res.running, res.closed = r.owner.Running(), r.tab.Closed()
	case "call":
		res.resp, res.err = r.owner.Call(r.callCtx(op), h, credits.General, op.body)
	case "stop":
		if r.runCancel != nil {
			r.runCancel()
		} else {
			res.err = r.stop()
		}
	case "cancel":
		r.cancels[op.body]()
	case "done":
		rt.Recv(r.owner.Done())
		res.running, res.closed = r.owner.Running(), r.tab.Closed()
	case "close":
		r.tab.Close()
	case "running":
		res.running = r.owner.Running()
	}
}

// callCtx is the context a call runs under, as its op says.
func (r *ownerRun) callCtx(op ownerOp) context.Context {
	switch op.ctx {
	case "cancelled":
		return ownerCancelled
	case "cancel":
		return r.ctxs[op.body]
	case "deadline":
		// Its cancel is left to the deadline, a timer of the run that
		// ends with it; the table rounds it down to the ms, as Call does.
		ctx, _ := rt.WithTimeout(context.Background(), ownerPoll/2)
		d, _ := ctx.Deadline()
		r.deadlines[op.body] = d.UnixMilli()
		return ctx
	}
	return context.Background()
}

// trace is how a trace shows the operation.
func (op ownerOp) trace() string {
	switch op.kind {
	case "call":
		if op.ctx == "bg" && op.hand == "answer" {
			return fmt.Sprintf("Call(%d)", op.body)
		}
		return fmt.Sprintf("Call(%d, ctx %s, handler %s)", op.body, op.ctx, op.hand)
	case "cancel":
		return fmt.Sprintf("cancel(%d)", op.body)
	}
	return op.kind
}

// text is how a trace shows the answer res of op.
func (res ownerRes) text(op ownerOp) string {
	switch op.kind {
	case "call":
		if res.err != nil {
			return res.err.Error()
		}
		return fmt.Sprint(res.resp)
	case "running":
		return fmt.Sprint(res.running)
	case "stop", "run":
		return fmt.Sprint(res.err)
	case "done":
		return fmt.Sprintf("running %v, closed %v", res.running, res.closed)
	}
	return "ok"
}

// ctxErr is the error a call's context may end it with, or nil when its
// context is never done.
func (op ownerOp) ctxErr() error {
	switch op.ctx {
	case "cancelled", "cancel":
		return context.Canceled
	case "deadline":
		return context.DeadlineExceeded
	}
	return nil
}

// replied reports whether a call's answer is a reply of the owner.
func replied(err error) bool {
	return err == nil || errors.Is(err, explored.ErrHandlerPanicked) || errors.Is(err, explored.ErrDeadline)
}

// check is the run's C15 verdict on the answers: "" when it holds.
func (r *ownerRun) check(sc *ownerScript) string {
	bad := slices.Clone(r.late)
	closes := sc.has("close")
	for t, ops := range sc.threads {
		mine := sc.started // the owner runs for this thread: it started it, or the setup did
		for i, op := range ops {
			res := r.res[t][i]
			if !res.done {
				continue
			}
			switch op.kind {
			case "start":
				mine = true
			case "stop":
				if r.runCancel == nil && !errors.Is(res.err, context.Canceled) {
					bad = append(bad, fmt.Sprintf("thread %d: stop returned %v, not Run's context.Canceled", t, res.err))
				}
				mine = false
			case "run":
				if !errors.Is(res.err, context.Canceled) {
					bad = append(bad, fmt.Sprintf("thread %d: Run returned %v, not its context's context.Canceled", t, res.err))
				}
				if res.running || !res.closed {
					bad = append(bad, fmt.Sprintf("thread %d: after Run returned, Running answered %v and the table's Closed %v", t, res.running, res.closed))
				}
			case "done":
				if res.running || !res.closed {
					bad = append(bad, fmt.Sprintf("thread %d: after Done was closed, Running answered %v and the table's Closed %v", t, res.running, res.closed))
				}
			case "running":
				if len(ops) > 1 && res.running != mine {
					bad = append(bad, fmt.Sprintf("thread %d: Running answered %v", t, res.running))
				}
			case "call":
				// The owner runs through the call when this thread
				// started it (or the setup did) and stops it after the
				// call, and no thread closes the table under it.
				through := mine && !closes && slices.ContainsFunc(ops[i+1:], func(op ownerOp) bool { return op.kind == "stop" })
				if msg := r.checkCall(op, res, through, mine && !sc.started); msg != "" {
					bad = append(bad, fmt.Sprintf("thread %d: %s", t, msg))
				}
			}
		}
	}
	return strings.Join(bad, "; ")
}

// checkCall judges one call's answer. through: the owner ran through the
// whole call (it was started before it, its stop comes after it in the
// same thread, and nothing closed the table); started: its thread's Start
// returned before it, and its stop did not.
func (r *ownerRun) checkCall(op ownerOp, res ownerRes, through, started bool) string {
	b, err := op.body, res.err
	served := slices.Contains(r.served, b)
	what := fmt.Sprintf("Call(%d) (context %s, handler %s) answered %v", b, op.ctx, op.hand, err)
	if err == nil {
		what = fmt.Sprintf("Call(%d) (context %s, handler %s) answered %d", b, op.ctx, op.hand, res.resp)
	}
	switch {
	case op.ctx == "cancelled":
		if !errors.Is(err, context.Canceled) || served {
			return what + ", but its context was done before the call: it must answer context.Canceled and reserve nothing"
		}
		return ""
	case op.ctxErr() != nil && errors.Is(err, op.ctxErr()):
		return ""
	case through && op.ctx == "bg" && !replied(err):
		return what + ", but the owner ran from before the call to after it: the call must get its reply"
	case err == nil:
		if !served || op.hand == "panic" || res.resp != 10*b {
			return what + ", but the handler was not given it or answered otherwise"
		}
		return ""
	}
	if bad := checkError(op, err, served, started); bad != "" {
		return what + bad
	}
	return ""
}

// checkError judges a call's error answer err, given whether the handler
// served its request and whether its thread's Start had returned: "" when
// it holds, else what is wrong with it.
func checkError(op ownerOp, err error, served, started bool) string {
	var hp *explored.HandlerPanic
	switch {
	case errors.As(err, &hp):
		if !served || op.hand != "panic" || hp.Value != ownerPanic(op.body) || !errors.Is(err, explored.ErrHandlerPanicked) {
			return ", but its handler did not panic so (a *HandlerPanic wrapping ErrHandlerPanicked with the panic's value)"
		}
	case op.hand == "panic" && served:
		return ", but its handler panicked: the caller must get a *HandlerPanic"
	case errors.Is(err, explored.ErrDeadline):
		if op.ctx != "deadline" || served {
			return ": only a request with a deadline, never served, is refused so"
		}
	case errors.Is(err, explored.ErrOwnerGone):
		if served {
			return ", but the owner served it and replied before it stopped (the reply was in its channel)"
		}
	case errors.Is(err, explored.ErrNoOwner):
		if served || started {
			return ", but the owner served it, or its thread's Start had returned: the owner was running"
		}
	case errors.Is(err, explored.ErrNoTable):
		if served {
			return ", but the owner served it"
		}
	default:
		return " (no answer a call may give)"
	}
	return ""
}

// left is the C15 verdict on the table the run leaves, with the owner
// stopped: "" when every row the owner took was finished and nothing was
// reserved that no answer accounts for.
func (r *ownerRun) left(sc *ownerScript) string {
	rows := r.rowsLeft()
	answer, acc := r.accounts(sc)
	lo, hi, noTable, noOwner := acc.lo, acc.hi, acc.noTable, acc.noOwner
	var bad []string
	gens, reserved := 0, 0
	for n, row := range rows {
		gens += int(row.lo >> 2)
		switch row.lo & 3 {
		case 1:
			reserved++
		case 2:
			if row.req == nil {
				break
			}
			b := row.req.Body
			if slices.Contains(r.served, b) || answer[b].done && errors.Is(answer[b].err, explored.ErrDeadline) {
				bad = append(bad, fmt.Sprintf("slot %d is left enqueued with request %d, which the owner took (its handler ran, or it was refused with ErrDeadline): it must finish the row", n+1, b))
			}
		case 3:
			if !sc.has("close") {
				body := "?"
				if row.req != nil {
					body = fmt.Sprint(row.req.Body)
				}
				bad = append(bad, fmt.Sprintf("slot %d is left processing (request %s): the owner took it and never finished it, so its slot is never freed", n+1, body))
			}
		}
	}
	// A call whose enqueue found the table closed leaves its row
	// reserved, as does one that found no owner running once the owner
	// had closed the table (its release does nothing then): the table is
	// dead, its rows with it.
	if reserved > noTable+noOwner {
		bad = append(bad, fmt.Sprintf("%d rows are left reserved, but only %d calls answered ErrNoTable or ErrNoOwner: a reservation no call enqueued or released", reserved, noTable+noOwner))
	}
	if gens < lo || gens > hi {
		bad = append(bad, fmt.Sprintf("the calls made %d reservations, but their answers account for %d to %d (a call whose context was done before it reserves nothing)", gens, lo, hi))
	}
	return strings.Join(bad, "; ")
}

// rowLeft is a row of the table a run leaves: the low half of its word
// and the request its box holds, if any.
type rowLeft struct {
	lo  uint64
	req *explored.Request[int, int]
}

// rowsLeft reads the table's rows through its layout.
func (r *ownerRun) rowsLeft() [credits.Slots]rowLeft {
	var rows [credits.Slots]rowLeft
	lay := tableLayout(r.tab)
	boxes, _ := lay.(layout.Boxes)
	for _, w := range lay.Words() {
		var n int
		if _, err := fmt.Sscanf(w.Name, "slots[%d].", &n); err != nil {
			continue
		}
		switch v := w.Load().(type) {
		case [2]uint64:
			rows[n].lo = v[0]
		default:
			if b, ok := boxes.Box(v); ok && b.Payload != nil {
				rows[n].req, _ = b.Payload.(*explored.Request[int, int])
			}
		}
	}
	return rows
}

// callAccount is what the calls' answers say of the table: between lo and
// hi reservations (a generation of a slot each), and how many calls
// answered ErrNoTable and ErrNoOwner.
type callAccount struct{ lo, hi, noTable, noOwner int }

// accounts returns each finished call's answer, by request, and what the
// answers say of the table.
func (r *ownerRun) accounts(sc *ownerScript) (map[int]ownerRes, callAccount) {
	var a callAccount
	answer := map[int]ownerRes{}
	for t, ops := range sc.threads {
		for i, op := range ops {
			res := r.res[t][i]
			if op.kind != "call" || !res.done {
				continue
			}
			answer[op.body] = res
			if errors.Is(res.err, explored.ErrNoOwner) {
				a.noOwner++
			}
			switch {
			case op.ctx == "cancelled":
			case errors.Is(res.err, explored.ErrNoTable):
				// Refused by the reserve, or by the enqueue after it.
				a.noTable++
				a.hi++
			case op.ctxErr() != nil && errors.Is(res.err, op.ctxErr()):
				a.hi++ // done before the reserve, or while it waited
			default:
				a.lo, a.hi = a.lo+1, a.hi+1
			}
		}
	}
	return answer, a
}

// ownerFamily generates the Owner's scenarios from the alphabet: every
// context a call can have, with every handler, each in the smallest frame
// where it means something, so that each scenario stays a few thousand
// schedules at the default bound:
//
//   - started: the owner is started in the setup; one caller calls with
//     the context and handler, then calls once more with Background (the
//     owner must still serve it, whatever the first request did), then
//     stops the owner. For contexts Background, already cancelled and a
//     deadline, with the handler answering or panicking; not Background
//     with an answer (cr-owner-call-vs-stop), nor a cancelled context
//     with a panic (the handler never sees that request).
//   - stopped: a caller calls with each of those contexts and handlers
//     (Background with an answer too) while a second thread stops the
//     owner, at any point of the call: the reply, the owner's end or the
//     context's, whichever the call can have seen. Within 1 preemption:
//     at 2, each costs 14,000 to 17,000 schedules, more than the rest of
//     the family together.
//   - cancel: a caller calls with a context that a second thread cancels,
//     at any point of the call, then stops the owner.
//   - run: one thread runs the owner (Run, on its own goroutine); a second
//     calls it, answered or panicking, cancels Run's context and waits on
//     Done.
//   - close: a caller with a deadline (so that it returns even when the
//     owner never takes its row) and a thread that closes the table under
//     the owner, between its list of enqueued rows and its take.
func ownerFamily() []Scenario {
	call := func(ctx, hand string) ownerOp { return ownerOp{kind: "call", body: 1, ctx: ctx, hand: hand} }
	bg := ownerOp{kind: "call", body: 2, ctx: "bg", hand: "answer"}
	stop := ownerOp{kind: "stop"}
	var out []Scenario
	for _, ctx := range []string{"bg", "cancelled", "deadline"} {
		for _, hand := range []string{"answer", "panic"} {
			if ctx == "bg" && hand == "answer" || ctx == "cancelled" && hand == "panic" {
				continue
			}
			out = append(out, ownerScenario("cr-owner-gen-started-"+ctx+"-"+hand,
				fmt.Sprintf("a Call with a %s context whose handler %ss, then one with Background that must be served, then the stop, against the owner started in the setup (C15)", ctx, hand),
				true, []ownerOp{call(ctx, hand), bg, stop}))
		}
	}
	for _, ctx := range []string{"bg", "cancelled", "deadline"} {
		for _, hand := range []string{"answer", "panic"} {
			if ctx == "cancelled" && hand == "panic" {
				continue
			}
			out = append(out, ownerScenario("cr-owner-gen-stopped-"+ctx+"-"+hand,
				fmt.Sprintf("a Call with a %s context whose handler %ss while another thread stops the owner started in the setup (C15)", ctx, hand),
				true, []ownerOp{call(ctx, hand)}, []ownerOp{stop}).Within(1))
		}
	}
	out = append(out, ownerScenario("cr-owner-gen-cancel-answer",
		"a Call whose context another thread cancels at any point of it, then the stop: the reply or context.Canceled, the row held until the owner finishes it (C15)",
		true, []ownerOp{call("cancel", "answer"), stop}, []ownerOp{{kind: "cancel", body: 1}}))
	for _, hand := range []string{"answer", "panic"} {
		out = append(out, ownerScenario("cr-owner-gen-run-bg-"+hand,
			fmt.Sprintf("Run on a thread of its own; another calls (its handler %ss), cancels Run's context and waits on Done: Run returns context.Canceled, Done closes once the table is closed (C15)", hand),
			false, []ownerOp{{kind: "run"}}, []ownerOp{call("bg", hand), stop, {kind: "done"}}))
	}
	out = append(out, ownerScenario("cr-owner-gen-close-deadline-answer",
		"a thread closes the table under a running owner while a Call with a deadline waits: the owner's take may find the listed row gone (C11, C15)",
		true, []ownerOp{call("deadline", "answer"), stop}, []ownerOp{{kind: "close"}}))
	return out
}
