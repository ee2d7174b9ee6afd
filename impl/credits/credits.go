// Package credits is a fixed 32-slot admission table whose rows also hold
// the request payload (spec/credits.md).
//
// # The contract
//
// The table is a fixed admission bound: at most 26 General and 6 Internal
// reservations are held at once (slots 1..26 and 27..32; a class never
// borrows the other's slots), and the bound is not configurable. Reserve
// never blocks: when every slot of the class is in use it refuses at once
// with Exhausted, and the caller decides what a refusal means (a 503, a
// retry later, a queue of its own). It is not a blocking semaphore: no
// caller waits in the table for a slot to free, and none is queued.
//
// A reservation belongs to a Holder, which stands in for the process that
// made it (Go has no process identifiers). Make one Holder per request
// when each request reserves, releases and may fail on its own: its
// reservation is then freed by its own Release, or, if the request's
// goroutine dies before releasing, by a Sweep after the holder's Exit.
// Make one Holder per process (or per connection) when its reservations
// should all be given up together: one Exit makes every reservation it
// never enqueued sweepable. A Holder's calls on one token must not overlap.
//
// Release(h, tok) reports whether this call freed tok's slot. False means
// the slot was not reserved by h under tok's epoch at the call, and the
// call changed nothing: tok was already released, enqueued, or swept; h is
// not the holder that reserved it (the reservation then stays held until
// its own holder releases it, or exits and a Sweep frees it); or the table
// is closed. A false from a Release that must succeed is a bug of the
// caller, to be logged, not retried.
//
// # Rows, owners and epochs
//
// A caller reserves a slot, then enqueues its payload into that row; an
// owner takes enqueued rows, handles them and finishes them, which frees
// the slot. Each reservation carries an epoch unique for the table's
// lifetime, and every later transition is pinned to it, so a stale token
// can never change a recycled slot. Every transition is exactly one
// compare-and-swap on one slot word. A caller that only needs the bound
// reserves and releases, and never enqueues (the package example
// AdmissionBound).
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
	"unsafe"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/seam"
)

// A slot word is a 128-bit seam.Pair. Its lo half is the row word, a
// generation and a state:
//
//	bits 0..1   the state: stFree, stReserved, stEnqueued, stProcessing
//	bits 2..63  the slot's generation, which a reservation raises by one
//
// Its hi half is the serial of the reserving holder; it changes only with
// the reservation that sets it and means nothing while the row is free.
//
// A generation is never handed out twice in one slot, and every transition
// changes the state, so a lo value never returns to its slot once replaced:
// a compare-and-swap against a loaded lo succeeds only if the slot did not
// change in between (no ABA), with no garbage collector involved. The epoch a
// caller sees is generation<<slotBits | slot-1 (unique across the table's
// slots too); it is opaque to callers (C3).
const (
	stateBits = 2
	stateMask = 1<<stateBits - 1

	stFree       = 0
	stReserved   = 1
	stEnqueued   = 2
	stProcessing = 3

	slotBits = 5 // 32 slots
	slotMask = 1<<slotBits - 1

	// maxGen is the largest generation a slot hands out, so that every epoch
	// is below 1<<63. A slot that has used it refuses to reserve again,
	// loudly, rather than repeat an epoch (C3).
	maxGen = 1<<(63-slotBits) - 1
)

func pack(gen, state uint64) uint64 { return gen<<stateBits | state }
func genOf(lo uint64) uint64        { return lo >> stateBits }
func stateOf(lo uint64) uint64      { return lo & stateMask }
func epochOf(slot int, gen uint64) uint64 {
	return gen<<slotBits | uint64(slot-1)
}

// box is an enqueued row's side data. gen is the generation of the
// reservation that enqueued it; gen, markedMs and payload are immutable once
// made.
//
// published moves false → true once, and only for the box that the row's
// (reserved, g) → (enqueued, g) compare-and-swap published: the owner sets it
// (Take, or Finish of a row still enqueued) before its compare-and-swap
// moves the row out of (enqueued, g). So once the row has left
// (reserved, g) and (enqueued, g) both, published says whether this box was
// the one published; the enqueue that installed it reads it to learn its
// own outcome when another call published for it (see EnqueueAt).
type box[P any] struct {
	gen       uint64
	markedMs  int64 // when the payload was enqueued
	payload   P
	published seam.Bool
}

// slot is one row of the table, padded to a 64-byte cache line of its own
// so that reservers of neighbouring slots do not contend for one line.
type slot[P any] struct {
	// word is the row (see above). It moves only along
	//
	//	(free, g)        → (reserved, g+1) h   Reserve: any caller, by a 128-bit
	//	                                       compare-and-swap that also sets hi
	//	(reserved, g)    → (enqueued, g)       Enqueue: the holder h, pinned by g;
	//	                                       publishes the box it installed
	//	(enqueued, g)    → (processing, g)     Take: the owner
	//	(processing|enqueued, g) → (free, g)   Finish: the owner
	//	(reserved, g)    → (free, g)           Release: the holder h
	//	(reserved, g)    → (free, g)           Sweep: after h exited
	//
	// each one a single compare-and-swap. All but Reserve write lo alone:
	// hi is fixed for the reservation's life.
	//
	// The operations load lo, then hi, with two 64-bit loads rather than one
	// 128-bit snapshot. That is exact here: hi changes only together with
	// lo (by Reserve), and a lo value never returns, so the hi loaded after
	// a lo is that row's hi unless lo changed in between. A compare-and-swap
	// on the loaded lo then fails; and a refusal decided on the pair was
	// true when hi was loaded, because by then the row was no longer the
	// one lo showed.
	word seam.Pair
	// holder is the last holder that reserved this slot: it keeps that
	// Holder reachable and lets Sweep ask whether it is alive. The reserver
	// stores it right after its compare-and-swap, only if it differs, so
	// Sweep trusts it only when its serial equals the word's hi.
	holder seam.Pointer[Holder]
	// box holds the side data of the slot's latest enqueue, tagged with its
	// generation. A box is only ever replaced by one of a newer generation
	// (putBox), and each generation has at most one, so once an enqueue of
	// generation g has installed its box, no other call can replace it until
	// a later reservation of the slot enqueues.
	box seam.Pointer[box[P]]
	_   [slotPad]byte
}

// slotPad fills a slot to a whole number of 64-byte lines.
const slotPad = (64 - (unsafe.Sizeof(seam.Pair{})+2*unsafe.Sizeof(uintptr(0)))%64) % 64

// Table is the slot table, holding payloads of type P. The zero value is a
// live table with every slot free on MonotonicMs, ready to use; New returns
// one with options. A Table is safe for concurrent use; every
// method is lock-free. Of the transitions only Enqueue allocates (one box per
// payload); Enqueued allocates its list (AppendEnqueued need not).
type Table[P any] struct {
	slots [Slots]slot[P]
	// closed moves false → true once, by Close, and never back (C11).
	closed seam.Bool
	clock  func() int64
	stats
}

// Option configures a Table.
type Option func(*config)

type config struct{ clock func() int64 }

// WithClock sets the millisecond clock that marks enqueued rows. The default
// is MonotonicMs. A nil clock is a defect: WithClock panics, so that the
// mistake shows where the table is made, not in a later Enqueue.
func WithClock(clock func() int64) Option {
	if clock == nil {
		panic("credits: WithClock(nil): the clock must be a function (defect)")
	}
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

// now reads the table's clock: MonotonicMs for the zero Table.
func (t *Table[P]) now() int64 {
	if t.clock == nil {
		return MonotonicMs()
	}
	return t.clock()
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

// slotOf returns tok's slot and generation, panicking on a token no
// reservation can carry (C12). ok is false for an epoch that names another
// slot or a generation never handed out: such a token pins nothing.
func (t *Table[P]) slotOf(tok Token) (s *slot[P], gen uint64, ok bool) {
	if tok.Slot < 1 || tok.Slot > Slots {
		panic(fmt.Sprintf("credits: token slot %d outside 1..%d (defect)", tok.Slot, Slots))
	}
	if tok.Epoch == 0 {
		panic(fmt.Sprintf("credits: token for slot %d has epoch 0, which no reservation carries (defect)", tok.Slot))
	}
	gen = tok.Epoch >> slotBits
	return &t.slots[tok.Slot-1], gen, tok.Epoch&slotMask == uint64(tok.Slot-1) && gen >= 1 && gen <= maxGen
}

func checkHolder(h *Holder) {
	if h == nil {
		panic("credits: nil holder (defect)")
	}
}

// Reserve claims a free slot of class c for h under a fresh epoch (C1, C2,
// C3) and returns its token. Used sequentially it claims the lowest free
// slot, so a freed slot is the next one handed out; under concurrency it may
// claim any free slot of c. It returns Exhausted when every slot of c is in
// use at one instant, and NoTable after Close; both leave the table
// unchanged. It panics, changing nothing, if the slot it would claim has
// handed out its last generation (after 2^58 reservations of one slot).
//
// Reserve linearizes at its successful compare-and-swap. An Exhausted answer
// linearizes between two scans that saw the same row words, none free, in
// every slot of the class (exhausted): a lo value never returns once
// replaced, so each slot held its row throughout, and at that instant all
// were in use. A pass that claims nothing without that proof starts again.
func (t *Table[P]) Reserve(h *Holder, c Class) (Token, Result) {
	checkHolder(h)
	first, last := t.slotRange(c)
	for {
		if t.closed.Load() {
			return Token{}, NoTable
		}
		for n := first; n <= last; n++ {
			s := &t.slots[n-1]
			lo := s.word.LoadLo()
			if stateOf(lo) != stFree {
				continue
			}
			gen := genOf(lo) + 1
			if gen > maxGen {
				panic(fmt.Sprintf("credits: slot %d has handed out all %d generations; another reservation would repeat an epoch (C3)", n, uint64(maxGen)))
			}
			// (free, g) → (reserved, g+1) with hi = h's serial: the slot
			// becomes h's under a generation it never had. hi is loaded
			// apart from lo, but it changes only with lo, so comparing lo
			// compares the free row we saw, hi included. When hi already
			// names h (h held this slot last), lo is the only half to
			// change, and the 64-bit compare-and-swap does it. A failure
			// means another reserve won the slot; try the next one.
			next := pack(gen, stReserved)
			var won bool
			if hi := s.word.LoadHi(); hi == h.Serial() {
				won = s.word.CompareAndSwapLo(lo, next)
			} else {
				won = s.word.CompareAndSwap(lo, hi, next, h.Serial())
			}
			if won {
				if s.holder.Load() != h {
					s.holder.Store(h)
				}
				return Token{Slot: n, Epoch: epochOf(n, gen)}, OK
			}
			t.lostRace()
		}
		if t.exhausted(first, last) {
			return Token{}, Exhausted
		}
	}
}

// exhausted scans slots first..last twice and reports whether both scans saw
// the same row word, in use, in every slot. A scan that finds a free slot
// ends the check at once (the caller claims it).
func (t *Table[P]) exhausted(first, last int) bool {
	var seen [Slots]uint64
	for n := first; n <= last; n++ {
		if seen[n-1] = t.slots[n-1].word.LoadLo(); stateOf(seen[n-1]) == stFree {
			return false
		}
	}
	for n := first; n <= last; n++ {
		if t.slots[n-1].word.LoadLo() != seen[n-1] {
			return false
		}
	}
	return true
}

// Enqueue is shorthand for EnqueueAt with the table's clock.
func (t *Table[P]) Enqueue(h *Holder, tok Token, payload P) Result {
	return t.EnqueueAt(t.now(), h, tok, payload)
}

// EnqueueAt installs payload in tok's row and publishes it as enqueued,
// marked at nowMs, in one compare-and-swap (C4, C5): no observer ever sees an
// enqueued row without its payload. It succeeds only for the holder that
// reserved, with that epoch, from reserved; otherwise it returns Lost. It
// returns NoTable after Close. Refusals leave the table unchanged.
//
// The payload travels in a box beside the row word, installed before the
// compare-and-swap that publishes it (putBox) and tagged with the
// reservation's generation. A box is never replaced by one of an older or
// equal generation, so of the calls that passed the pin check only the first
// to install its box may publish it; a stale token's box is replaced by the
// next one of the slot and is never read (readers take the box only while
// the row word shows its generation enqueued).
//
// Two enqueues of one reservation may race (two goroutines of one holder).
// The one whose box is installed first wins; the other must not answer Lost
// while the row is still reserved, since the winner has not yet published
// and a lost answer would precede every state that justifies it (C16).
// It helps instead: it publishes the winner's box with the winner's
// compare-and-swap, then answers Lost. The winner, finding its
// compare-and-swap failed, learns from the row (or, once the owner has
// moved the row on, from its box's published flag) whether its box was
// published or the reservation was released or swept first.
func (t *Table[P]) EnqueueAt(nowMs int64, h *Holder, tok Token, payload P) Result {
	checkHolder(h)
	s, gen, ok := t.slotOf(tok)
	if t.closed.Load() {
		return NoTable
	}
	lo, hi := s.word.LoadLo(), s.word.LoadHi()
	if !ok || lo != pack(gen, stReserved) || hi != h.Serial() {
		return Lost
	}
	b := &box[P]{gen: gen, markedMs: nowMs, payload: payload}
	if !putBox(s, b) {
		// Another enqueue of this reservation installed its box first.
		// (reserved, g) → (enqueued, g), on its behalf: publishes its box,
		// the only box generation g can have. Fails if the row moved on
		// since lo was loaded (that enqueue published, or h released, or a
		// sweep freed the row): the row has left reserved either way.
		s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))
		return Lost
	}
	// (reserved, g) → (enqueued, g): publishes b with the state (C4). The
	// row word cannot return to (reserved, g) once it has left it, so a
	// failure is final and the outcome is read off what the row became.
	if s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) {
		return OK
	}
	t.lostRace()
	return t.enqueueOutcome(s, b)
}

// enqueueOutcome reports whether b, installed while its row was
// (reserved, b.gen), was published by another call's compare-and-swap (an
// enqueue of the same reservation helping), or the row was released or
// swept first. The row has left (reserved, b.gen) for good. If it shows
// generation b.gen enqueued or processing, it was published, and the only
// box generation b.gen can have published is b. If it moved further (freed,
// or reserved again), it was published exactly when the owner set
// b.published before moving it out of enqueued: the owner's store precedes
// its compare-and-swap, which precedes the load here that saw its effect.
func (t *Table[P]) enqueueOutcome(s *slot[P], b *box[P]) Result {
	lo := s.word.LoadLo()
	if genOf(lo) == b.gen && (stateOf(lo) == stEnqueued || stateOf(lo) == stProcessing) {
		return OK
	}
	if b.published.Load() {
		return OK
	}
	return Lost
}

// putBox makes b the slot's box unless a box of the same or a newer
// generation is there already, which it reports by returning false.
// Generations only grow in a slot, so a writer whose reservation was freed
// and outrun can never replace the box of the reservation that followed it.
func putBox[P any](s *slot[P], b *box[P]) bool {
	for {
		old := s.box.Load()
		if old != nil && old.gen >= b.gen {
			return false
		}
		// old → b: fails only if another writer replaced old meanwhile.
		if s.box.CompareAndSwap(old, b) {
			return true
		}
	}
}

// Take moves tok's row from enqueued to processing and returns its payload,
// which stays the row's until Finish (C6, C7). It reports false, changing
// nothing, when the row is not enqueued under tok's epoch or the table is
// closed. Each enqueued payload is taken at most once.
func (t *Table[P]) Take(tok Token) (P, bool) {
	var zero P
	s, gen, ok := t.slotOf(tok)
	for {
		if t.closed.Load() {
			return zero, false
		}
		lo := s.word.LoadLo()
		if !ok || lo != pack(gen, stEnqueued) {
			return zero, false
		}
		// The box is generation g's while the row still shows (enqueued, g):
		// a newer one needs a later reservation, which needs the row freed
		// first. If the row moved on since lo was loaded, the box may be
		// gone (a finish dropped it) or newer; the compare-and-swap below
		// then fails. Only the box generation g published can have that
		// generation once the row was enqueued; it is marked published
		// before the row can leave enqueued (see box).
		b := s.box.Load()
		if b != nil && b.gen == gen {
			b.published.Store(true)
		}
		// (enqueued, g) → (processing, g): the owner now holds the payload.
		// Success means the row did not change since lo was loaded, so b is
		// generation g's box.
		if s.word.CompareAndSwapLo(lo, pack(gen, stProcessing)) {
			return b.payload, true
		}
		t.lostRace()
	}
}

// Finish frees tok's row when it is processing or, defensively, still
// enqueued under tok's epoch, so a row listed twice across two polls drains
// exactly once (C8). It reports whether this call freed the row; a repeated
// Finish, or one after Close, changes nothing and reports false.
func (t *Table[P]) Finish(tok Token) bool {
	s, gen, ok := t.slotOf(tok)
	for {
		if t.closed.Load() {
			return false
		}
		lo := s.word.LoadLo()
		if !ok || lo != pack(gen, stProcessing) && lo != pack(gen, stEnqueued) {
			return false
		}
		if stateOf(lo) == stEnqueued {
			// Finishing a row never taken: generation g's box is marked
			// published before the row leaves enqueued (see box and Take).
			if b := s.box.Load(); b != nil && b.gen == gen {
				b.published.Store(true)
			}
		}
		// (processing|enqueued, g) → (free, g): the owner consumed the row.
		if s.word.CompareAndSwapLo(lo, pack(gen, stFree)) {
			// Drop the payload so the table does not keep it reachable;
			// fails harmlessly if the next reservation enqueued already.
			if b := s.box.Load(); b != nil && b.gen == gen {
				s.box.CompareAndSwap(b, nil)
			}
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
	s, gen, ok := t.slotOf(tok)
	for {
		if t.closed.Load() {
			return false
		}
		lo, hi := s.word.LoadLo(), s.word.LoadHi()
		if !ok || lo != pack(gen, stReserved) || hi != h.Serial() {
			return false
		}
		// (reserved, g) → (free, g), by the holder itself.
		if s.word.CompareAndSwapLo(lo, pack(gen, stFree)) {
			return true
		}
		t.lostRace()
	}
}

// Sweep frees every reserved row whose holder has exited, the only state
// without a payload, and returns how many rows it freed (C10). Enqueued and
// processing rows are never swept: the owner always consumes them. A row
// whose holder's Reserve has not yet returned is left for a later sweep.
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
		s := &t.slots[n-1]
		lo := s.word.LoadLo()
		if stateOf(lo) != stReserved {
			continue
		}
		hi := s.word.LoadHi()
		// The holder word names this reservation's holder when its serial is
		// hi: serials are unique, so a stale holder word cannot match. Until
		// the reserver has stored it, the reservation counts as live.
		if h := s.holder.Load(); h == nil || h.Serial() != hi || h.Alive() {
			continue
		}
		// (reserved, g) → (free, g), holder exited. Fails if the row moved
		// on (the holder enqueued before it exited).
		if s.word.CompareAndSwapLo(lo, pack(genOf(lo), stFree)) {
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
func (t *Table[P]) Enqueued() []Entry[P] { return t.AppendEnqueued(nil) }

// AppendEnqueued is Enqueued appending to dst (which it returns, extended),
// so that an owner polling in a loop can reuse one buffer: dst[:0] from the
// previous poll lists without allocating.
func (t *Table[P]) AppendEnqueued(dst []Entry[P]) []Entry[P] {
	if t.closed.Load() {
		return dst
	}
	out, start := dst, len(dst)
	for n := 1; n <= Slots; n++ {
		s := &t.slots[n-1]
		lo := s.word.LoadLo()
		if stateOf(lo) != stEnqueued {
			continue
		}
		b := s.box.Load()
		// Unchanged lo around the box load: b is this row's box. Otherwise
		// the row moved on while we read, as if we had read it later.
		if s.word.LoadLo() != lo {
			continue
		}
		out = append(out, Entry[P]{Token: Token{Slot: n, Epoch: epochOf(n, genOf(lo))}, MarkedMs: b.markedMs, Payload: b.payload})
	}
	// Insertion sort of the appended entries: at most 32, already in slot
	// order.
	for i := start + 1; i < len(out); i++ {
		for j := i; j > start && out[j].MarkedMs < out[j-1].MarkedMs; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Snapshot counts the rows of each class by state (C14). Each slot is
// read once, so the counts of a class always sum to its bound, but they need
// not describe one instant. A closed table reports zero counts.
func (t *Table[P]) Snapshot() Snapshot {
	var s Snapshot
	if t.closed.Load() {
		s.Closed = true
		return s
	}
	for n := 1; n <= Slots; n++ {
		c := &s.General
		if n > GeneralSlots {
			c = &s.Internal
		}
		switch stateOf(t.slots[n-1].word.LoadLo()) {
		case stFree:
			c.Free++
		case stReserved:
			c.Reserved++
		case stEnqueued:
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

// exportPairInline is never called: it makes this package's export data
// carry the inline bodies of seam.Pair's methods, so that they inline into
// every instantiation of the tables (see seam.Pair).
func exportPairInline(p *seam.Pair) {
	p.Load()
	p.LoadLo()
	p.LoadHi()
	p.Store(0, 0)
	p.CompareAndSwap(0, 0, 0, 0)
	p.CompareAndSwapLo(0, 0)
}

var _ = exportPairInline
