package interleave

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tollgate/tollgate/explore/rt"
	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Wait, explored (spec/explore.md §10, "wait"). Table.Wait is a loop of
// rounds: read the table's clock, admit at that reading, and on a refusal
// sleep the refusal's wait and go round again. A scenario's wait operation
// runs the explored table's own Wait, on a table whose clock is the run's
// virtual clock (explore/rt, started at the operation's NowMs) and whose
// sleep moves that clock (rt.Sleep: a switch point at its start and one at
// its end), so every strategy interleaves the other threads with each
// round's clock reading, admit and sleep.
//
// No model operation is a wait: the model's is the admit each round runs.
// The history records a wait as its rounds, each an admit operation of the
// waiting thread: a round that slept d is an admit at its clock reading
// refused with a wait of d (its interval from the reading to the sleep's
// start); the last round is an admit at its reading answered as Wait
// answered (taken with the remaining Wait returned; refused with Never for
// ErrNever), its interval from the reading to Wait's return. porcupine then
// checks each refusal's wait against the state that refused (T7), that the
// sleep was that wait, and that a wait that returned took its cost at its
// last reading, as it checks any admit: a Wait that slept too little,
// trusted a wake, or answered a take it never made is a history no order
// of the admits explains.

// tbWaitEpoch is where the virtual clock of a scenario with waits starts
// (the instant every run on the virtual clock starts at, the Owner's
// too); the table's clock reads the wait's NowMs there.
var tbWaitEpoch = ownerEpoch

// WaitOps returns s, a token-bucket scenario, with the operations at
// (thread, index) ats run by Table.Wait: each must be an admit of a
// thread, and all of them must start at one NowMs, the table's clock at
// the start of every run.
func (s Scenario) WaitOps(ats ...[2]int) Scenario {
	if s.tb == nil {
		panic("explore: WaitOps of a scenario that is not a token-bucket one")
	}
	tb := *s.tb
	tb.waits = maps.Clone(s.tb.waits)
	if tb.waits == nil {
		tb.waits = map[[2]int]bool{}
	}
	for _, at := range ats {
		tb.waits[at] = true
	}
	s.tb = &tb
	return s
}

// CancelWaits returns s, a token-bucket scenario whose thread w has
// waits (WaitOps), with those waits run under a context that thread t
// cancels once its own operations are done: the cancel is one step of t
// (explore/rt's context), so it can land between any two steps of a wait,
// before its clock reading, between its admit and its sleep, during the
// sleep. A wait that answers the context's error must have taken nothing.
func (s Scenario) CancelWaits(t, w int) Scenario {
	if s.tb == nil {
		panic("explore: CancelWaits of a scenario that is not a token-bucket one")
	}
	tb := *s.tb
	tb.cancels = maps.Clone(s.tb.cancels)
	if tb.cancels == nil {
		tb.cancels = map[int]int{}
	}
	tb.cancels[t] = w
	s.tb = &tb
	return s
}

// checkWaits checks the script's waits: admits of threads, one start clock.
// It returns that clock.
func (sc *tbScript) checkWaits(name string) (int64, error) {
	var from int64
	first := true
	for at := range sc.waits {
		t, i := at[0], at[1]
		if t < 0 || t >= len(sc.threads) || i < 0 || i >= len(sc.threads[t]) {
			return 0, fmt.Errorf("explore: scenario %s: wait at thread %d, operation %d: no such operation", name, t, i)
		}
		in := sc.threads[t][i]
		if in.Kind != model.TBAdmit {
			return 0, fmt.Errorf("explore: scenario %s: wait at thread %d, operation %d is a %s: a wait runs an admit's input", name, t, i, in)
		}
		if !first && in.NowMs != from {
			return 0, fmt.Errorf("explore: scenario %s: waits start at %d ms and %d ms: the table has one clock, give them one NowMs", name, from, in.NowMs)
		}
		from, first = in.NowMs, false
	}
	for t, w := range sc.cancels {
		if t < 0 || t >= len(sc.threads) || w < 0 || w >= len(sc.threads) || t == w {
			return 0, fmt.Errorf("explore: scenario %s: thread %d cancels the waits of thread %d: want two threads of the scenario", name, t, w)
		}
		waits := false
		for i := range sc.threads[w] {
			waits = waits || sc.isWait(w, i)
		}
		if !waits {
			return 0, fmt.Errorf("explore: scenario %s: thread %d cancels the waits of thread %d, which has none", name, t, w)
		}
	}
	return from, nil
}

// waitCtx is the context thread t's waits run under: one a thread cancels
// (CancelWaits), or Background.
func (r *tbRun) waitCtx(t int) context.Context {
	if ctx := r.ctxs[t]; ctx != nil {
		return ctx
	}
	return context.Background()
}

// cancelOp is the operation of thread t that cancels the waits it
// cancels (CancelWaits), run after its script's operations; nil when it
// cancels none.
func (p *tbProgram) cancelOp(r *tbRun, t int) func() {
	w, ok := p.script.cancels[t]
	if !ok {
		return nil
	}
	return r.cancels[w]
}

// isWait reports whether thread t's operation i is a wait.
func (sc *tbScript) isWait(t, i int) bool { return sc.waits[[2]int{t, i}] }

// waitText is how a trace shows a wait of input in.
func waitText(in model.TBInput[string]) string {
	return "wait" + strings.Replace(strings.TrimPrefix(in.String(), "admit"), " at ", " from ", 1)
}

// waitRound is the round of a wait in flight: its clock reading and the
// stamp of its start.
type waitRound struct {
	in   model.TBInput[string]
	call int64
	open bool
}

// waitTable builds the run's table for a scenario with waits: the
// virtual clock started, the table's clock reading it from the waits'
// NowMs, its sleep rt.Sleep, and each reading and sleep recorded as a
// round of the thread that made it.
func (p *tbProgram) waitTable(c *controller, r *tbRun) sut.TBTable[string] {
	rt.StartClock(tbWaitEpoch)
	r.rounds = make([]waitRound, p.threads())
	r.ctxs, r.cancels = make([]context.Context, p.threads()), make([]context.CancelFunc, p.threads())
	r.failed = map[[2]int]string{}
	for _, w := range p.script.cancels {
		r.ctxs[w], r.cancels[w] = rt.WithCancel(context.Background())
	}
	now := func() int64 {
		ms := p.waitFrom + rt.Since(tbWaitEpoch).Milliseconds()
		if w := c.cur; w != nil && w.id < len(r.rounds) {
			rd := &r.rounds[w.id]
			rd.in.NowMs, rd.call, rd.open = ms, c.stamp(false), true
		}
		return ms
	}
	sleep := func(ctx context.Context, d time.Duration) error {
		if w := c.cur; w != nil && w.id < len(r.rounds) && r.rounds[w.id].open {
			rd := &r.rounds[w.id]
			out := model.TBOutput{RetryAfterMs: int64(d / time.Millisecond)}
			r.ops = append(r.ops, linearizability.TBOp{Client: w.id, Input: rd.in, Output: out, Call: rd.call, Return: c.stamp(true)})
			rd.open = false
		}
		rt.Sleep(d)
		return ctx.Err()
	}
	return newTBWaitTable(p.fault, sut.TBClock{Now: now, Sleep: sleep})
}

// newTBWaitTable builds the explored token-bucket table of a fault with a
// clock and a sleep.
var newTBWaitTable = func(f fault.Fault, clock sut.TBClock) sut.TBTable[string] {
	return sut.NewHookedTBTableOn[string](f, clock)
}

// doWait runs thread t's wait of input in, its operation i: Table.Wait
// on the run's table. It returns the wait's answer and its last round,
// whose interval the caller closes at the operation's return (nil when no
// round read the clock: the wait refused its arguments first). A wait
// that failed with its context's error took nothing: it has no last
// round (an admit it ran after its last sleep is not recorded, so a take
// it made shows as a bucket no recorded operation explains), and skip is
// set: the operation is no admit of the history.
func (p *tbProgram) doWait(r *tbRun, t, i int, in model.TBInput[string]) (out model.TBOutput, last *linearizability.TBOp, skip bool) {
	w, ok := r.table.(sut.TBWaiter[string])
	if !ok {
		panic(fmt.Sprintf("explore: the %s table has no Wait", p.fault))
	}
	rd := &r.rounds[t]
	rd.in, rd.open = in, false
	var err error
	p.track(r, in.Kind, func() model.TBOutput {
		lim := tokenbucket.Limits{Capacity: in.Limits.Capacity, RefillPerSecond: in.Limits.RefillPerSecond}
		var rem float64
		rem, err = w.Wait(r.waitCtx(t), in.Key, lim, in.Cost)
		if !errors.Is(err, context.Canceled) {
			out = waitOutput(rem, err)
		}
		return out
	})
	open := rd.open
	rd.open = false
	if errors.Is(err, context.Canceled) {
		r.failed[[2]int{t, i}] = err.Error()
		return out, nil, true
	}
	if !open {
		return out, nil, false
	}
	return out, &linearizability.TBOp{Client: t, Input: rd.in, Output: out, Call: rd.call}, false
}

// waitOutput is Wait's answer in model form, as the admit of its last
// round would answer.
func waitOutput(rem float64, err error) model.TBOutput {
	var arg *tokenbucket.ArgError
	switch {
	case err == nil:
		return model.TBOutput{OK: true, Remaining: rem}
	case errors.Is(err, tokenbucket.ErrNever) || strings.HasPrefix(err.Error(), tokenbucket.ErrNever.Error()):
		// The explored table and every mutant are copies of impl's files,
		// each with an ErrNever of its own: told by its text.
		return model.TBOutput{RetryAfterMs: model.Never}
	case errors.As(err, &arg):
		return model.TBOutput{Invalid: arg.Field}
	}
	panic(fmt.Sprintf("explore: a wait failed with %v, which no explored wait can answer (its context has no deadline)", err))
}

// tbWaitCancels are prefix p's waits under a context the other thread
// cancels after its take, in both orders of the threads, at limits lim
// when they are set: the cancel lands before a round's clock reading,
// between its admit and its sleep, or during the sleep.
func tbWaitCancels(p tbPrefix, lim model.Limits) []generated {
	var out []generated
	for _, ops := range [][]string{{"wait", "take"}, {"take", "wait"}} {
		g := tbGenerated(p, ops, []string{genKey, genKey}, lim)
		w := slices.Index(ops, "wait")
		g.Scenario = g.Scenario.CancelWaits(1-w, w)
		g.Name = strings.Replace(g.Name, "-wait", "-wait.cancel", 1)
		g.Race += fmt.Sprintf("; T%d cancels T%d's context after its take", 1-w, w)
		out = append(out, g)
	}
	return out
}
