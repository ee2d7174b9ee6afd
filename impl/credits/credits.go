// Package credits is a fixed 32-slot admission table whose rows also hold
// the request payload (spec/credits.md).
//
// Slots 1..26 admit the General class and 27..32 the Internal class; a class
// never borrows the other's slots. A caller reserves a slot, then enqueues
// its payload into that row; an owner takes enqueued rows, handles them and
// finishes them, which frees the slot. Each reservation carries an epoch
// unique for the table's lifetime, and every later transition is pinned to
// it, so a stale token can never change a recycled slot. Every transition is
// exactly one compare-and-swap on one slot word.
//
// Go has no process identifiers, so a Holder stands in for the calling
// process: Enqueue and Release must come from the Holder that reserved, and
// Sweep reclaims reservations whose Holder has exited before enqueueing.
//
// Owner and Owner.Call add the owner side the table was built for: an owner
// that drains enqueued rows on a fixed poll, and a caller helper that
// reserves, enqueues and waits for the reply.
package credits

import (
	"fmt"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/seam"
)

// row is the immutable value a slot word points at. Every transition
// publishes a new row (or nil), so a row pointer, once replaced, never
// returns to its slot, and a compare-and-swap against a loaded pointer
// succeeds only if the slot did not change in between (no ABA).
//
// "Never returns" rests on Go's garbage collector: a goroutine that loaded a
// row still holds a pointer to it, so its memory cannot be freed and handed
// out as a new row while that goroutine could still compare against it. A
// port without a tracing collector (C, C++, Rust) must get the same
// guarantee another way: the epoch in the compare-and-swap word itself (a
// tagged word), or safe memory reclamation (hazard pointers, epoch-based
// reclamation) before a row is reused (spec/credits.md §5, spec/PORTING.md).
type row[P any] struct {
	state    State // Reserved, Enqueued or Processing
	holder   *Holder
	epoch    uint64
	markedMs int64 // Enqueued, Processing: when the payload was enqueued
	payload  P     // Enqueued, Processing only (C4)
}

// Table is the slot table, holding payloads of type P. The zero value is not
// usable; create one with New. A Table is safe for concurrent use; every
// method is lock-free.
type Table[P any] struct {
	// slots[n-1] is slot n's word. It holds one of:
	//
	//	nil                      free
	//	row{Reserved, h, e}      reserved by holder h under epoch e; no payload
	//	row{Enqueued, h, e, p}   payload p published, waiting for the owner
	//	row{Processing, h, e, p} taken by the owner, which will finish it
	//
	// and moves only along
	//
	//	nil → Reserved                 Reserve (any caller)
	//	Reserved → Enqueued            Enqueue (the holder, same epoch)
	//	Enqueued → Processing          Take (the owner, same epoch)
	//	Processing|Enqueued → nil      Finish (the owner, same epoch)
	//	Reserved → nil                 Release (the holder, same epoch),
	//	                               Sweep (holder exited)
	//
	// each one a single compare-and-swap on this word.
	slots [Slots]seam.Pointer[row[P]]
	// epochs holds the last epoch drawn; it only grows, by Add (C3).
	epochs seam.Uint64
	// closed moves false → true once, by Close, and never back (C11).
	closed seam.Bool
	clock  func() int64
	stats
}

// Option configures a Table.
type Option func(*config)

type config struct{ clock func() int64 }

// WithClock sets the millisecond clock that marks enqueued rows. The default
// is MonotonicMs.
func WithClock(clock func() int64) Option {
	return func(c *config) { c.clock = clock }
}

// MonotonicMs is the default clock: milliseconds on the monotonic clock
// since the process started (the same base as tokenbucket.MonotonicMs).
func MonotonicMs() int64 { return clock.MonotonicMs() }

// New returns a live table with every slot free.
func New[P any](opts ...Option) *Table[P] {
	cfg := config{clock: MonotonicMs}
	for _, o := range opts {
		o(&cfg)
	}
	return &Table[P]{clock: cfg.clock}
}

// slotRange returns the slots of class c (C1), panicking on a non-class.
func (t *Table[P]) slotRange(c Class) (first, last int) {
	switch c {
	case General:
		return 1, GeneralSlots
	case Internal:
		return GeneralSlots + 1, Slots
	}
	panic(fmt.Sprintf("credits: class %d is neither General nor Internal (defect)", uint8(c)))
}

func (t *Table[P]) word(tok Token) *seam.Pointer[row[P]] {
	if tok.Slot < 1 || tok.Slot > Slots {
		panic(fmt.Sprintf("credits: token slot %d outside 1..%d (defect)", tok.Slot, Slots))
	}
	if tok.Epoch == 0 {
		panic(fmt.Sprintf("credits: token for slot %d has epoch 0, which no reservation carries (defect)", tok.Slot))
	}
	return &t.slots[tok.Slot-1]
}

func checkHolder(h *Holder) {
	if h == nil {
		panic("credits: nil holder (defect)")
	}
}

// pinned reports whether r is tok's reservation: the epoch matches (C3).
func pinned[P any](r *row[P], tok Token) bool {
	return r != nil && r.epoch == tok.Epoch
}

// Reserve claims a free slot of class c for h under a fresh epoch (C1, C2,
// C3) and returns its token. Used sequentially it claims the lowest free
// slot, so a freed slot is the next one handed out; under concurrency it may
// claim any free slot of c. It returns Exhausted when every slot of c is in
// use at one instant, and NoTable after Close; both leave the table
// unchanged.
//
// Reserve linearizes at its successful compare-and-swap. An Exhausted answer
// linearizes between two scans that saw the same row pointers in every slot
// of the class: a pointer never returns once replaced, so each slot held its
// row throughout, and at that instant all were in use.
func (t *Table[P]) Reserve(h *Holder, c Class) (Token, Result) {
	checkHolder(h)
	first, last := t.slotRange(c)
	var seen [Slots]*row[P]
	var claim *row[P]
	for {
		if t.closed.Load() {
			return Token{}, NoTable
		}
		for n := first; n <= last; n++ {
			w := &t.slots[n-1]
			if seen[n-1] = w.Load(); seen[n-1] != nil {
				continue
			}
			if claim == nil {
				claim = &row[P]{state: Reserved, holder: h, epoch: t.epochs.Add(1)}
			}
			// nil → Reserved: the slot becomes h's under claim's epoch. A
			// failure means another reserve won it; try the next slot.
			if w.CompareAndSwap(nil, claim) {
				return Token{Slot: n, Epoch: claim.epoch}, OK
			}
			t.lostRace()
			seen[n-1] = w.Load()
		}
		if t.sameRows(first, last, &seen) {
			return Token{}, Exhausted
		}
	}
}

// sameRows rescans slots first..last and reports whether each still holds
// the row recorded in seen (all non-nil).
func (t *Table[P]) sameRows(first, last int, seen *[Slots]*row[P]) bool {
	for n := first; n <= last; n++ {
		if r := t.slots[n-1].Load(); r == nil || r != seen[n-1] {
			return false
		}
	}
	return true
}

// Enqueue is shorthand for EnqueueAt with the table's clock.
func (t *Table[P]) Enqueue(h *Holder, tok Token, payload P) Result {
	return t.EnqueueAt(t.clock(), h, tok, payload)
}

// EnqueueAt installs payload in tok's row and publishes it as enqueued,
// marked at nowMs, in one compare-and-swap (C4, C5): no observer ever sees a
// reserved row with a payload or an enqueued row without one. It succeeds
// only for the holder that reserved, with that epoch, from reserved;
// otherwise it returns Lost. It returns NoTable after Close. Refusals leave
// the table unchanged.
func (t *Table[P]) EnqueueAt(nowMs int64, h *Holder, tok Token, payload P) Result {
	checkHolder(h)
	w := t.word(tok)
	for {
		if t.closed.Load() {
			return NoTable
		}
		old := w.Load()
		if !pinned(old, tok) || old.state != Reserved || old.holder != h {
			return Lost
		}
		next := &row[P]{state: Enqueued, holder: h, epoch: old.epoch, markedMs: nowMs, payload: payload}
		// Reserved → Enqueued, payload and state in the same write. Fails
		// only if the row changed since the load (released or swept); the
		// reload then answers Lost.
		if w.CompareAndSwap(old, next) {
			return OK
		}
		t.lostRace()
	}
}

// Take moves tok's row from enqueued to processing and returns its payload,
// which stays in the row until Finish (C6, C7). It reports false, changing
// nothing, when the row is not enqueued under tok's epoch or the table is
// closed. Each enqueued payload is taken at most once.
func (t *Table[P]) Take(tok Token) (P, bool) {
	w := t.word(tok)
	var zero P
	for {
		if t.closed.Load() {
			return zero, false
		}
		old := w.Load()
		if !pinned(old, tok) || old.state != Enqueued {
			return zero, false
		}
		next := &row[P]{state: Processing, holder: old.holder, epoch: old.epoch, markedMs: old.markedMs, payload: old.payload}
		// Enqueued → Processing: the owner now holds the payload.
		if w.CompareAndSwap(old, next) {
			return old.payload, true
		}
		t.lostRace()
	}
}

// Finish frees tok's row when it is processing or, defensively, still
// enqueued under tok's epoch, so a row listed twice across two polls drains
// exactly once (C8). It reports whether this call freed the row; a repeated
// Finish, or one after Close, changes nothing and reports false.
func (t *Table[P]) Finish(tok Token) bool {
	w := t.word(tok)
	for {
		if t.closed.Load() {
			return false
		}
		old := w.Load()
		if !pinned(old, tok) || (old.state != Processing && old.state != Enqueued) {
			return false
		}
		// Processing (or Enqueued) → free: the owner consumed the row.
		if w.CompareAndSwap(old, nil) {
			return true
		}
		t.lostRace()
	}
}

// Release is the caller-side free of a reservation that was never enqueued,
// for a caller that could not reach an owner (C9). It frees tok's row only
// when it is reserved by h under tok's epoch, and reports whether it did; at
// most one Release of a token succeeds.
func (t *Table[P]) Release(h *Holder, tok Token) bool {
	checkHolder(h)
	w := t.word(tok)
	for {
		if t.closed.Load() {
			return false
		}
		old := w.Load()
		if !pinned(old, tok) || old.state != Reserved || old.holder != h {
			return false
		}
		// Reserved → free, by the holder itself.
		if w.CompareAndSwap(old, nil) {
			return true
		}
		t.lostRace()
	}
}

// Sweep frees every reserved row whose holder has exited, the only state
// without a payload, and returns how many rows it freed (C10). Enqueued and
// processing rows are never swept: the owner always consumes them.
//
// Sweep is not one atomic step: each row it frees is freed by its own
// compare-and-swap, which succeeds only if the row is still the reserved row
// of an exited holder it read. Two sweeps may split the rows between them.
func (t *Table[P]) Sweep() int {
	freed := 0
	for n := 1; n <= Slots; n++ {
		if t.closed.Load() {
			return freed
		}
		w := &t.slots[n-1]
		old := w.Load()
		if old == nil || old.state != Reserved || old.holder.Alive() {
			continue
		}
		// Reserved (holder exited) → free. Fails if the row moved on.
		if w.CompareAndSwap(old, nil) {
			freed++
		} else {
			t.lostRace()
		}
	}
	return freed
}

// Enqueued lists the enqueued rows, oldest mark first, ties by slot (C13).
// It is a read-only view for the owner's scan; consuming a row is still the
// compare-and-swap in Take. Each entry is a row its slot held during the
// call; the list as a whole is not one atomic snapshot. A closed table lists
// nothing.
func (t *Table[P]) Enqueued() []Entry[P] {
	if t.closed.Load() {
		return nil
	}
	var out []Entry[P]
	for n := 1; n <= Slots; n++ {
		if r := t.slots[n-1].Load(); r != nil && r.state == Enqueued {
			out = append(out, Entry[P]{Token: Token{Slot: n, Epoch: r.epoch}, MarkedMs: r.markedMs, Payload: r.payload})
		}
	}
	// Insertion sort: at most 32 entries, already in slot order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].MarkedMs < out[j-1].MarkedMs; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Snapshot counts the rows of each class by state (C14). Each slot is read
// once, so the counts of a class always sum to its bound, but they need not
// describe one instant. A closed table reports zero counts.
func (t *Table[P]) Snapshot() Snapshot {
	var s Snapshot
	if t.closed.Load() {
		return s
	}
	for n := 1; n <= Slots; n++ {
		c := &s.General
		if n > GeneralSlots {
			c = &s.Internal
		}
		r := t.slots[n-1].Load()
		switch {
		case r == nil:
			c.Free++
		case r.state == Reserved:
			c.Reserved++
		case r.state == Enqueued:
			c.Enqueued++
		default:
			c.Processing++
		}
	}
	return s
}

// Close ends the table: its owner died and the table died with it (C11).
// From then on Reserve and Enqueue return NoTable, Take reports nothing,
// Finish and Release do nothing, Sweep frees nothing, Enqueued is empty and
// Snapshot is all zero. An operation that overlaps Close may still complete
// on the live table; it linearizes before Close.
func (t *Table[P]) Close() { t.closed.Store(true) }

// Closed reports whether Close was called.
func (t *Table[P]) Closed() bool { return t.closed.Load() }
