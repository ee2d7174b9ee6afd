package linearizability

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/model"
)

// Credit-table holder actions (CrWorkload.Mix), in order.
const (
	ActEnqueue        = iota // enqueue a payload for the owner
	ActRelease               // give the reservation back
	ActExitHolding           // the holder dies holding its reservation; a sweep frees it
	ActExitMidEnqueue        // the holder dies while its enqueue is in flight
	ActStaleToken            // reuse the previous reservation's token, then release
	ActSweepRace             // the holder dies; a sweep spins against its enqueue (still under way) for the row
	ActReleaseRace           // a second thread of the holder spins release against its enqueue
	ActForeignRelease        // try to release the latest reservation of another holder, then release
	numActs
)

// CrWorkload describes a credit-table recording.
//
// Holders goroutines each run Rounds rounds: reserve a slot of one of
// Classes, hold it for up to Hold scheduler yields, then do one action drawn
// from Mix. A holder that dies starts again as a new holder (a new
// HolderID). An exit in the middle of an enqueue is made by a second
// goroutine of that holder (its own client id) while the enqueue runs, and
// with probability UnknownProb the enqueue's answer is dropped (recorded as
// unknown), as if the caller died before it arrived.
//
// Owners goroutines poll the table's Enqueued list and take and finish what
// they find, racing each other. A poll is recorded (a listing, checked per
// slot: CrOp) when its answer differs from the owner's previous poll's, so
// that an owner spinning on an unchanged table does not grow the history
// without bound; with
// probability DoubleFinishProb they finish twice (C8). Sweepers goroutines
// sweep whenever a holder has exited since their last sweep, racing the
// enqueues; a holder that died waits for such a sweep before it starts again
// as a new holder (awaitSweep). If CloseAfter > 0, the first owner closes
// the table (the owner dies) after finishing that many rows.
//
// The checker's work is bounded by construction. It knows how many rows a
// sweep freed, not which, so a sweep that freed k of d candidate rows (the
// reserved rows of exited holders) leaves up to C(d, k) model states, and an
// unknown sweep up to 2^d. A holder must take one of MaxDead permits before
// it dies and gives it back only after a sweep has run since its exit
// (awaitSweep); a dead holder holds at most one reserved row, so d ≤ MaxDead
// at every instant and one sweep multiplies the states by at most
// C(MaxDead, MaxDead/2) (3 at the default of 3; 2^3 = 8 for an unknown
// sweep). Without the bound, a history in which one sweep freed 8 dead rows
// of a dozen went Unknown after 40 s; with it, the default workloads check
// in milliseconds. Rounds bound the history's length, Holders + Owners +
// Sweepers (+ one helper per holder) the operations open at once.
type CrWorkload struct {
	Name             string
	Holders          int
	Rounds           int
	Classes          []model.Class
	Hold             int
	Mix              [numActs]int
	UnknownProb      float64
	Owners           int
	Sweepers         int
	DoubleFinishProb float64
	CloseAfter       int
	// MaxDead is the most exited holders whose reservation may wait for a
	// sweep at once (0: DefaultMaxDead). See the bound above.
	MaxDead int
}

// DefaultMaxDead is CrWorkload.MaxDead when it is 0.
const DefaultMaxDead = 3

func (w CrWorkload) maxDead() int64 {
	if w.MaxDead == 0 {
		return DefaultMaxDead
	}
	return int64(w.MaxDead)
}

// Validate reports a workload that cannot run, naming the field and the rule.
func (w CrWorkload) Validate() error {
	bad := func(field string, v any, rule string) error {
		return fmt.Errorf("linearizability: workload %s: %s %v %s", w.Name, field, v, rule)
	}
	switch {
	case w.Holders < 1:
		return bad("holders", w.Holders, "must be >= 1")
	case w.Rounds < 1:
		return bad("rounds", w.Rounds, "must be >= 1")
	case len(w.Classes) == 0:
		return bad("classes", w.Classes, "must not be empty")
	case w.Hold < 0:
		return bad("hold", w.Hold, "must be >= 0")
	case w.Owners < 0 || w.Sweepers < 0:
		return bad("owners/sweepers", []int{w.Owners, w.Sweepers}, "must be >= 0")
	case w.MaxDead < 0 || w.MaxDead > 8:
		return bad("max dead", w.MaxDead, "must be in 0..8 (each dead row can double the checker's states)")
	}
	for _, c := range w.Classes {
		if c != model.General && c != model.Internal {
			return bad("classes", c, "must hold only general and internal")
		}
	}
	total := 0
	for _, m := range w.Mix {
		if m < 0 {
			return bad("mix weight", m, "must be >= 0")
		}
		total += m
	}
	if total == 0 {
		return bad("mix", w.Mix, "must have a positive weight")
	}
	return nil
}

// crRecorder is one credit-table recording in progress. Every call it makes
// goes through the embedded recording's call, as every recorder's does.
type crRecorder struct {
	recording[model.CrInput[Payload], model.CrOutput[Payload]]
	dying   atomic.Int64                           // holders between taking a dead permit and giving it back
	holders atomic.Uint64                          // last HolderID handed out
	exits   atomic.Int64                           // exits so far (sweepers sweep when it moves)
	swept   atomic.Int64                           // exits counted before the start of the latest finished sweep
	latest  atomic.Pointer[model.CrInput[Payload]] // the latest reservation: its holder and token
	mu      sync.Mutex
	ops     []CrOp
}

// do applies in for client and records it; drop records the answer as
// unknown (the caller died before it arrived), though do still returns it.
// A call the backend did not make, or one that broke it, is not recorded
// and answers the zero output, as does one whose outcome is unknown.
func (r *crRecorder) do(client int, in model.CrInput[Payload], drop bool) model.CrOutput[Payload] {
	out, _ := r.made(client, in, drop)
	return out
}

// doKnown is do for a call whose answer the caller needs: known is false
// when the outcome is unknown or the call was not made (then out is the
// zero output, which must not be read as an answer).
func (r *crRecorder) doKnown(client int, in model.CrInput[Payload]) (out model.CrOutput[Payload], known bool) {
	return r.made(client, in, false)
}

func (r *crRecorder) made(client int, in model.CrInput[Payload], drop bool) (out model.CrOutput[Payload], known bool) {
	op, ok := r.call(client, in)
	if !ok {
		return out, false
	}
	out, known = op.Output, !op.Unknown
	if drop && known {
		var zero model.CrOutput[Payload]
		op.Output, op.Unknown, op.Settled, op.Return = zero, true, false, 0
	}
	r.record(op)
	return out, known
}

func (r *crRecorder) record(op CrOp) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

func (r *crRecorder) newHolder() model.HolderID { return model.HolderID(r.holders.Add(1)) }

// exit records holder h's exit, calling again while the outcome is unknown
// (exiting twice is harmless): a sweep after it must see h dead.
func (r *crRecorder) exit(client int, h model.HolderID) {
	r.retry(client, model.CrInput[Payload]{Kind: model.CrExit, Holder: h})
	r.exits.Add(1)
}

// die takes one of w's MaxDead permits to exit holding a reservation,
// waiting while every permit is out (the bound on the checker's work, see
// CrWorkload).
func (r *crRecorder) die(w CrWorkload) {
	for {
		n := r.dying.Load()
		if n < w.maxDead() && r.dying.CompareAndSwap(n, n+1) {
			return
		}
		if r.broke.stopped() {
			r.dying.Add(1) // the recording is stopping; keep awaitSweep's give-back balanced
			return
		}
		runtime.Gosched()
	}
}

// awaitSweep waits, when the workload has sweepers, until a sweep has
// started and finished since every exit so far, then gives back the permit
// die took: the dead holder's reserved row, if it still had one, is free.
func (r *crRecorder) awaitSweep(w CrWorkload) {
	defer r.dying.Add(-1)
	if w.Sweepers == 0 {
		return
	}
	for e := r.exits.Load(); r.swept.Load() < e && !r.broke.stopped(); {
		runtime.Gosched()
	}
}

func (r *crRecorder) holder(w CrWorkload, c int, rng *rand.Rand) {
	killer := w.Holders + c
	h := r.newHolder()
	var prev model.Token
	for round := range w.Rounds {
		if r.broke.stopped() {
			return
		}
		class := w.Classes[rng.IntN(len(w.Classes))]
		res, known := r.doKnown(c, model.CrInput[Payload]{Kind: model.CrReserve, Holder: h, Class: class})
		if !known {
			// The reserve's outcome is unknown (or it was not made): this
			// holder may or may not hold a slot under a token nobody knows
			// (the checker allows both: model.Credits.ReserveUnseen).
			h = r.abandon(w, c, h)
			continue
		}
		if res.Result != model.OK {
			runtime.Gosched()
			continue
		}
		tok := res.Token
		act := pick(rng, w.Mix[:])
		if l := r.latest.Swap(&model.CrInput[Payload]{Holder: h, Token: tok}); act == ActForeignRelease && l != nil && l.Holder != h {
			// Right away, while the other holder may still hold it (C9).
			r.do(c, model.CrInput[Payload]{Kind: model.CrRelease, Holder: h, Token: l.Token}, false)
		}
		for range rng.IntN(w.Hold + 1) {
			runtime.Gosched()
		}
		enqueue := model.CrInput[Payload]{Kind: model.CrEnqueue, Holder: h, Token: tok,
			Payload: fmt.Sprintf("c%d.r%d", c, round), NowMs: int64(round)}
		release := model.CrInput[Payload]{Kind: model.CrRelease, Holder: h, Token: tok}
		switch act {
		case ActEnqueue:
			if _, known := r.doKnown(c, enqueue); !known {
				h = r.abandon(w, c, h)
			}
		case ActRelease:
			if _, known := r.doKnown(c, release); !known {
				h = r.abandon(w, c, h)
			}
		case ActExitHolding:
			r.die(w)
			r.exit(c, h)
			r.awaitSweep(w)
			h = r.newHolder()
		case ActExitMidEnqueue:
			r.die(w)
			var wg sync.WaitGroup
			wg.Add(1)
			go func(h model.HolderID) {
				defer wg.Done()
				r.exit(killer, h)
			}(h)
			r.do(c, enqueue, rng.Float64() < w.UnknownProb)
			wg.Wait()
			r.awaitSweep(w)
			h = r.newHolder()
		case ActSweepRace:
			r.die(w)
			r.race(c, killer, enqueue, true)
			r.awaitSweep(w)
			h = r.newHolder()
		case ActReleaseRace:
			if !r.race(c, killer, enqueue, false) {
				h = r.abandon(w, c, h)
			}
		case ActForeignRelease:
			if _, known := r.doKnown(c, release); !known {
				h = r.abandon(w, c, h)
			}
		case ActStaleToken:
			if prev.Epoch != 0 {
				stale := enqueue
				stale.Token = prev
				r.do(c, stale, false)
			}
			if _, known := r.doKnown(c, release); !known {
				h = r.abandon(w, c, h)
			}
		}
		prev = tok
	}
}

// abandon ends holder h after a call on its reservation whose outcome is
// unknown or that was not made (a backend's timeout or lost connection):
// the row may still be reserved, and only h could release it, so h exits
// and a sweep frees the row if it is (its own, when the workload has no
// sweepers: rows of unknown epoch must not pile up, each multiplies the
// checker's states). It returns the new holder the client goes on as.
func (r *crRecorder) abandon(w CrWorkload, c int, h model.HolderID) model.HolderID {
	r.die(w)
	r.exit(c, h)
	if w.Sweepers == 0 {
		r.retry(c, model.CrInput[Payload]{Kind: model.CrSweep})
	}
	r.awaitSweep(w)
	return r.newHolder()
}

// race runs enqueue on this goroutine against a second goroutine (client
// helper) that hammers the same row: with sweep, the helper first records
// the holder's exit, then sweeps until a sweep frees a row or the enqueue has
// returned; otherwise it releases the token until a release frees it or the
// enqueue has returned. Exactly one of the two may win the row (C5, C9,
// C10). Only the helper's winning call and its last call are recorded: a
// sweep that freed nothing and a refused release change nothing in the
// model, so leaving the others out loses nothing, and it keeps the history
// short. It reports false when the row may still be reserved by a live
// holder because the outcome of the enqueue or of the helper's last call
// is unknown (the caller then abandons the holder).
func (r *crRecorder) race(client, helper int, enqueue model.CrInput[Payload], sweep bool) bool {
	var helperUnknown atomic.Bool
	var ready, done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if sweep {
			r.exit(helper, enqueue.Holder)
		}
		in := model.CrInput[Payload]{Kind: model.CrRelease, Holder: enqueue.Holder, Token: enqueue.Token}
		if sweep {
			in = model.CrInput[Payload]{Kind: model.CrSweep}
		}
		ready.Store(true)
		for {
			last := done.Load() || r.broke.stopped()
			// A call that loses is left out (unless it is the last):
			// marked, so that no fault takes it for a write in flight.
			omittable(r.b, helper, true)
			op, ok := r.call(helper, in)
			omittable(r.b, helper, false)
			if !ok {
				if last {
					helperUnknown.Store(true)
					return
				}
				continue
			}
			won := !op.Unknown && (op.Output.Count > 0 || (!sweep && op.Output.OK))
			// An unknown call may have won: record it and stop, as for a win.
			if won || last || op.Unknown {
				r.record(op)
				if op.Unknown {
					helperUnknown.Store(true)
				}
				if won || op.Unknown {
					return
				}
			}
			if last {
				return
			}
		}
	}()
	for !ready.Load() {
		runtime.Gosched()
	}
	_, known := r.doKnown(client, enqueue)
	done.Store(true)
	wg.Wait()
	// A known enqueue either won the row (enqueued) or lost it to the
	// release (free); a known last release of the helper likewise.
	return sweep || known || !helperUnknown.Load()
}

func (r *crRecorder) owner(w CrWorkload, c int, rng *rand.Rand, stop *atomic.Bool, closer bool) {
	finished := 0
	var last []model.Entry[Payload]
	first := true
	for {
		stopping := stop.Load() || r.broke.stopped()
		var entries []model.Entry[Payload]
		if op, ok := r.call(c, model.CrInput[Payload]{Kind: model.CrEnqueued}); ok && !op.Unknown {
			entries = op.Output.Entries
			if first || !slices.Equal(entries, last) {
				r.record(op)
				last, first = slices.Clone(entries), false
			}
		}
		for _, e := range entries {
			tok := model.Token{Slot: e.Slot, Epoch: e.Epoch}
			op, made := r.call(c, model.CrInput[Payload]{Kind: model.CrTake, Token: tok})
			if !made {
				// The take was not made (the backend did not send it): the
				// row is as it was, and a later poll takes it. Finishing it
				// now would free an enqueued row no take answered, and its
				// payload would never reach an owner.
				continue
			}
			// The recorded take carries the payload the poll saw in the
			// row: not sent (a take names only its token), it says which
			// enqueue a take of unknown outcome may have taken, whatever
			// epoch the store issued (CrDurability).
			op.Input.Payload = e.Payload
			r.record(op)
			if !op.Unknown && !op.Output.OK {
				continue
			}
			// The row is processing, or after a take whose outcome is
			// unknown perhaps still enqueued: finish frees either (C8).
			runtime.Gosched()
			fin := model.CrInput[Payload]{Kind: model.CrFinish, Token: tok}
			// A repeated finish of a row already freed is a no-op (C8).
			r.retry(c, fin)
			if rng.Float64() < w.DoubleFinishProb {
				r.do(c, fin, false)
			}
			finished++
			if closer && w.CloseAfter > 0 && finished == w.CloseAfter {
				r.do(c, model.CrInput[Payload]{Kind: model.CrClose}, false)
				return
			}
		}
		if stopping && len(entries) == 0 {
			return
		}
		runtime.Gosched()
	}
}

// retry makes a call whose repetition is harmless (finish, exit, sweep)
// again, up to 8 times backing off from 5 ms, while its outcome is unknown
// or it was not made (a backend's timeout or lost connection), so that a
// fault does not leave a row processing for good, a holder alive, or dead
// holders' rows unswept. It reports whether some call's outcome was known.
func (r *crRecorder) retry(c int, in model.CrInput[Payload]) bool {
	for i := range 8 {
		if _, known := r.doKnown(c, in); known || r.broke.stopped() {
			return known
		}
		time.Sleep(5 * time.Millisecond << i)
	}
	return false
}

// raiseTo sets v to n unless it holds more already. Two sweepers finish
// their sweeps in any order: one that read fewer exits and finishes last
// must not lower swept below what the other's sweep covered, or a holder
// that waits for that sweep (awaitSweep) waits for a sweep no sweeper
// will start (every exit seen), and the recording hangs.
func raiseTo(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if old >= n || v.CompareAndSwap(old, n) {
			return
		}
	}
}

func (r *crRecorder) sweeper(c int, stop *atomic.Bool) {
	seen := int64(0)
	for {
		stopping := stop.Load() || r.broke.stopped()
		if n := r.exits.Load(); n != seen {
			seen = n
			r.retry(c, model.CrInput[Payload]{Kind: model.CrSweep})
			raiseTo(&r.swept, n)
			continue
		}
		if stopping {
			return
		}
		runtime.Gosched()
	}
}

// RecordCredits runs w against b and returns the history, sorted by call
// stamp. b must be fresh: every slot free, no holder exited. An error from b
// other than ErrUnknown and ErrNotRun stops the recording and is returned.
func RecordCredits(w CrWorkload, b CrBackend, seed uint64) (CrHistory, error) {
	if err := w.Validate(); err != nil {
		return CrHistory{}, err
	}
	r := &crRecorder{}
	r.b = b
	shareStamps(b, &r.ts)
	var stop atomic.Bool
	var holders, others sync.WaitGroup
	start := barrier{n: int64(w.Holders + w.Owners + w.Sweepers)}
	for c := range w.Holders {
		holders.Add(1)
		go func() {
			defer holders.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			start.wait()
			r.holder(w, c, rng)
		}()
	}
	base := 2 * w.Holders
	for i := range w.Owners {
		others.Add(1)
		go func() {
			defer others.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(base+i)))
			start.wait()
			r.owner(w, base+i, rng, &stop, i == 0)
		}()
	}
	for i := range w.Sweepers {
		others.Add(1)
		go func() {
			defer others.Done()
			start.wait()
			r.sweeper(base+w.Owners+i, &stop)
		}()
	}
	holders.Wait()
	stop.Store(true)
	others.Wait()
	if err := r.broke.err(); err != nil {
		return CrHistory{}, err
	}
	h := CrHistory{Workload: w.Name, Seed: seed, Ops: r.ops}
	sort.Slice(h.Ops, func(i, j int) bool { return h.Ops[i].Call < h.Ops[j].Call })
	return h, nil
}
