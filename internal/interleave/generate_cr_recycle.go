package interleave

import "github.com/tollgate/tollgate/model"

// Generated credit scenarios that race a reader of a row with the row's
// recycle, and a reserver's exhausted scans with the rows of a full class.
// The pairs and triples of sysCredits start from a class with a free slot,
// so no reserve of theirs ever runs its exhausted scans while another
// thread changes a row, and a reader that loaded the prefix's row
// (a listing's re-check, a failed enqueue's outcome, a sweep's load of
// hi) meets at most the row's free, never the reservation after it. These
// families fill those holes of the interleaving coverage
// (spec/explore-site-pairs.md): each races one reader against the row's
// own free followed by a new reservation of the slot, by the holder that
// held it last (the 64-bit compare-and-swap of the low half), by a second
// holder (the 128-bit one) or by a caller (reserve and release, or
// reserve and exit for a sweep), and runs the same readers against two
// enqueues of one reservation, whose loser publishes the winner's box.

// crFull is the prefix whose class has no free slot: slot 27 reserved by
// the prefix's holder, 28–32 by the filler. A reserve scans the class,
// finds every slot in use and runs its exhausted scans (C2) while the
// other threads change slot 27's row. It is not one of crPrefixes: only
// the families below start from it.
func crFull() crPrefix {
	h, f := genHolder, genFiller
	return crPrefix{"full", "slot 27 reserved by another holder, 28–32 by a third: no internal slot free",
		[]CrStep{Reserve(h, genClass), Reserve(f, genClass), Reserve(f, genClass), Reserve(f, genClass),
			Reserve(f, genClass), Reserve(f, genClass)}, h, SetupTok(0)}
}

// crGone is the enq prefix with the row's holder exited since it
// enqueued: a sweep leaves the row alone (only a reserved row is swept),
// but once the owner has finished it, a new reservation of the slot by
// that holder is a sweep's to free (C10). Only the families below start
// from it.
func crGone() crPrefix {
	h := genHolder
	return crPrefix{"gone", "slot 27 enqueued by another holder, which has exited since",
		[]CrStep{Reserve(h, genClass), Enqueue(h, SetupTok(0), "p", 1), Exit(h)}, h, SetupTok(0)}
}

// Handed is the token of the latest reserve of thread t that has
// returned one when the step starts: a token its holder hands to another
// goroutine. False while thread t has none. The explorer's reduction sees
// the words a step touches, not this hand-over: it may leave out an order
// of the receiving step's start and the reserve's return, never make a run
// differ from its schedule.
func Handed(t int) TokRef {
	return func(e CrEnv) (model.Token, bool) {
		if t >= len(e.Threads) {
			return model.Token{}, false
		}
		outs := e.Threads[t]
		for k := len(outs) - 1; k >= 0; k-- {
			if tok, ok := tokOf(outs[k]); ok {
				return tok, true
			}
		}
		return model.Token{}, false
	}
}

// crMoreOp is the steps of the operations only these families use:
// reserve.own, a reserve by the prefix's holder (after it freed its row,
// it reserves the slot again with the 64-bit compare-and-swap of the low
// half, the slot's hi already naming it), and serve, the owner's whole
// poll: it lists the enqueued rows, takes the first and finishes it.
func crMoreOp(op string, p crPrefix, at int) ([]CrStep, bool) {
	switch op {
	case "reserve.own":
		return []CrStep{Reserve(p.holder, genClass)}, true
	case "list":
		return []CrStep{EnqueuedRows()}, true
	case "enqueue.handed":
		return []CrStep{Enqueue(caller(1), Handed(1), "h", 9)}, true
	case "serve":
		return []CrStep{EnqueuedRows(), Take(Listed(at)), Finish(Listed(at))}, true
	}
	return nil, false
}

var (
	// crRecycled are, by prefix, a reader of the prefix's row and the
	// recycles it races: the row's own free (the holder's release, the
	// owner's finish) then a new reservation of the slot, by its last
	// holder (FREE+reserve.own), by a caller that releases it again
	// (FREE+cycle) or by one that dies, for a sweep in a third thread
	// (FREE+die, sweep). The reader loaded the row before it was freed
	// and loads it again after: a failed enqueue reads its outcome off the
	// new reservation (C4, C16), a listing re-checks the row it saw
	// enqueued (C13), a sweep loads hi of a row freed under it (C10), and
	// the reservation after them must not be taken for the one they saw.
	crRecycled = []struct {
		prefix, reader string
		recycles       [][]string
	}{
		{"held", "enqueue", [][]string{{"release+reserve.own"}}},
		{"exited", "enqueue", [][]string{{"release+reserve.own+sweep"}}},
		{"held", "sweep", [][]string{{"release+reserve.own"}}},
		{"enq", "list", [][]string{{"finish+reserve.own"}, {"finish+cycle"}}},
		{"gone", "list", [][]string{{"finish+reserve.own+sweep"}}},
	}
	// crTwinsRaced are the readers of a reserved row raced by two enqueues
	// of its reservation (the loser publishes the winner's box,
	// C4, C16): a reserve's scan, a snapshot, a third enqueue; from the
	// full prefix, a reserve's exhausted scans (C2). From the held prefix
	// too, the row's recycle by its holder, which the loser's help must
	// not publish.
	crTwinsRaced = map[string][]string{
		"held": {"reserve", "snapshot", "enqueue", "release+reserve.own", "release+reserve2"},
		"full": {"reserve"},
	}
	// crExhausting are the operations that change a row of the full class
	// while a reserve runs its exhausted scans: the row enqueued and taken,
	// or freed and reserved again by its holder or another (C1, C2).
	crExhausting = []string{"enqueue+take", "release+reserve.own", "release+reserve2"}
	// crServed are, by prefix, the operations whose slot a caller
	// reserves and enqueues again while the owner serves the new row
	// (lists, takes and finishes it): a finish of the prefix's row that
	// drops its box while the next generation's box is dropped by the
	// owner (C5, C8), and a reserve that loaded the slot free before the
	// caller took it (C2).
	crServed = map[string][]string{"proc": {"finish"}, "own": {"reserve"}}
)

// crHanded are, by prefix, a reader of slot 27 raced by a caller that
// reserves the slot (after freeing the prefix's row, from held and enq)
// and enqueues, while a third thread enqueues the same reservation with
// the token the caller handed it (enqueue.handed): the two enqueues of a
// reservation made during the run, whose loser publishes the winner's box
// after the reader loaded the row (a reserve that saw the slot free, a
// failed enqueue reading its outcome, a listing's re-check) or before it
// loads it again (C2, C4, C13, C16).
var crHanded = []struct{ prefix, reader, caller string }{
	{"own", "reserve", "call"},
	{"held", "enqueue", "release+call"},
	{"enq", "list", "finish+call"},
}

// sysCrRecycle is the scenarios of these families, in the order of the
// lists above.
func sysCrRecycle() []generated {
	prefixes := map[string]crPrefix{"full": crFull(), "gone": crGone()}
	for _, p := range crPrefixes() {
		prefixes[p.name] = p
	}
	var out []generated
	add := func(p string, ops ...string) { out = append(out, crGenerated(prefixes[p], ops...)) }
	for _, r := range crRecycled {
		for _, rec := range r.recycles {
			add(r.prefix, append([]string{r.reader}, rec...)...)
		}
	}
	for _, p := range []string{"held", "full"} {
		for _, op := range crTwinsRaced[p] {
			add(p, "enqueue", "enqueue", op)
		}
	}
	for _, op := range crExhausting {
		add("full", "reserve", op)
	}
	for _, p := range []string{"proc", "own"} {
		for _, op := range crServed[p] {
			add(p, op, "call", "serve")
		}
	}
	for _, h := range crHanded {
		add(h.prefix, h.reader, h.caller, "enqueue.handed")
	}
	return out
}
