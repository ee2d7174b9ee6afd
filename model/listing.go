package model

import (
	"fmt"
	"math"
	"slices"
)

// TimedCrOp is one credit-table operation of a concurrent history with its
// real-time interval: the stamps of its call and of its return, on one
// clock shared by every operation of the history. Unknown marks an
// operation whose outcome nobody saw (a lost reply): it may have taken
// effect at any instant after its call, Return included or not, or never,
// and its Output means nothing.
type TimedCrOp[P comparable] struct {
	Input        CrInput[P]
	Output       CrOutput[P]
	Call, Return int64
	Unknown      bool
}

// ListingError is a listing no table could have answered (CheckListing).
type ListingError[P comparable] struct {
	Invariant string // "C13", or "C11" for a listing of a closed table
	Entry     Entry[P]
	Missing   bool // Entry was owed and not listed
	Detail    string
}

func (e *ListingError[P]) Error() string { return e.Invariant + ": " + e.Detail }

// Listings indexes a history for its listings' checks: for every enqueue
// that answered ok or is unknown, the earliest return of an operation that
// proves its row gone and the earliest call of one that may have moved it
// (see Rows). Build it once per history; it does not change ops.
type Listings[P comparable] struct {
	ops     []TimedCrOp[P]
	enq     []int   // indexes of the enqueues that answered ok or are unknown
	goneAt  []int64 // by position in enq
	movedAt []int64
}

// NewListings indexes ops (see Listings).
func NewListings[P comparable](ops []TimedCrOp[P]) *Listings[P] {
	x := &Listings[P]{ops: ops}
	byTok := map[Token][]int{} // token → take and finish operations
	var reserves [Slots + 1][]int
	closeGone, closeMoved := int64(math.MaxInt64), int64(math.MaxInt64)
	for i, o := range ops {
		switch o.Input.Kind {
		case CrEnqueue:
			if o.Unknown || o.Output.Result == OK {
				x.enq = append(x.enq, i)
			}
		case CrTake, CrFinish:
			byTok[o.Input.Token] = append(byTok[o.Input.Token], i)
		case CrClose:
			if !o.Unknown {
				closeGone = min(closeGone, o.Return)
			}
			closeMoved = min(closeMoved, o.Call)
		case CrReserve:
			if t := o.Output.Token; !o.Unknown && o.Output.Result == OK && t.Slot >= 1 && t.Slot <= Slots {
				reserves[t.Slot] = append(reserves[t.Slot], i)
			}
		}
	}
	for _, i := range x.enq {
		e := ops[i]
		tok := e.Input.Token
		gone, moved := closeGone, closeMoved
		for _, j := range byTok[tok] {
			o := ops[j]
			won := !o.Unknown && o.Output.OK
			if won {
				gone = min(gone, o.Return)
			}
			if won || o.Unknown {
				moved = min(moved, o.Call)
			}
		}
		if tok.Slot >= 1 && tok.Slot <= Slots && !e.Unknown {
			// A later claim of the slot needs the row freed first.
			for _, j := range reserves[tok.Slot] {
				if o := ops[j]; o.Output.Token.Epoch != tok.Epoch && o.Call > e.Return {
					gone = min(gone, o.Return)
				}
			}
		}
		x.goneAt, x.movedAt = append(x.goneAt, gone), append(x.movedAt, moved)
	}
	return x
}

// Op returns operation i of the indexed history.
func (x *Listings[P]) Op(i int) TimedCrOp[P] { return x.ops[i] }

// Rows returns the rows a non-atomic listing l (an enqueued call,
// spec/credits.md §5) may and must show, by the rule of spec/credits.md
// C13, as indexes into the history of enqueue operations:
//
//   - may: enqueues whose row the slot may have held, enqueued, at some
//     instant inside l's interval: the enqueue answered ok (or its outcome
//     is unknown), it was called before l returned, and nothing proves the
//     row gone before l was called: no take of its token that answered
//     ok, no finish of it that answered true, no reserve of its slot that
//     answered ok and was called after the enqueue returned, and no close,
//     returned before l's call;
//   - must: enqueues that answered ok, returned before l was called, whose
//     row nothing may have moved before l returned: no take of its token
//     that answered ok or whose outcome is unknown, no finish that
//     answered true or is unknown, and no close, called before l's return.
//     Such a row was enqueued at every instant of the call, and a listing
//     reads each slot once within it.
//
// An entry of l that is none of the may rows' is a row its slot never held
// during the call; a must row that l leaves out is one it skipped.
func (x *Listings[P]) Rows(l TimedCrOp[P]) (may, must []int) {
	for k, i := range x.enq {
		e := x.ops[i]
		if e.Call >= l.Return || x.goneAt[k] < l.Call {
			continue
		}
		may = append(may, i)
		if !e.Unknown && e.Return < l.Call && x.movedAt[k] >= l.Return {
			must = append(must, i)
		}
	}
	return may, must
}

// CheckListing checks one enqueued listing l of a concurrent history ops
// (l may be one of ops) against spec/credits.md C13, using only the
// real-time order of calls and returns, so it holds for every
// linearization: the entries are ordered by mark then slot, name slots
// 1..32 at most once each, and each is the row of one of the enqueues
// Listings.Rows says l may show (model.ListedBy: its token, payload and
// mark); every row it says l must show is listed. A listing whose outcome
// is unknown, or that is not an enqueued call, is not checked (nil).
//
// A listing is not one atomic step (spec/credits.md §5): each slot is read
// once, at its own instant inside the call. So an entry may come from an
// enqueue that overlaps the listing, and a row whose take or finish
// overlaps it may be listed or not; what no listing may show is a row of
// an enqueue that answered lost, or was called after the listing returned,
// or whose row a take, finish, close or later reserve had ended before the
// listing was called; and no listing may leave out a row that was enqueued
// throughout the call.
func CheckListing[P comparable](l TimedCrOp[P], ops []TimedCrOp[P]) *ListingError[P] {
	return NewListings(ops).Check(l)
}

// Check is CheckListing of l over the indexed history.
func (x *Listings[P]) Check(l TimedCrOp[P]) *ListingError[P] {
	if l.Input.Kind != CrEnqueued || l.Unknown {
		return nil
	}
	list := l.Output.Entries
	if err := checkListingShape(list); err != nil {
		return err
	}
	may, must := x.Rows(l)
	for _, e := range list {
		if !x.listedByAny(e, may) {
			return x.notHeld(l, e)
		}
	}
	for _, i := range must {
		in := x.ops[i].Input
		e := Entry[P]{Slot: in.Token.Slot, Epoch: in.Token.Epoch, MarkedMs: in.NowMs, Payload: in.Payload}
		if !slices.Contains(list, e) {
			return listingError(e, true, "the listing leaves out slot %d epoch %d (payload %v marked %dms), enqueued before the call and neither taken, finished nor closed before it returned",
				e.Slot, e.Epoch, e.Payload, e.MarkedMs)
		}
	}
	return nil
}

// listingError is a C13 violation of a listing at entry e (missing: an
// entry it left out).
func listingError[P comparable](e Entry[P], missing bool, format string, args ...any) *ListingError[P] {
	return &ListingError[P]{Invariant: "C13", Entry: e, Missing: missing, Detail: fmt.Sprintf(format, args...)}
}

// checkListingShape checks a listing's entries alone: slots in 1..Slots,
// none twice, ordered by mark then slot.
func checkListingShape[P comparable](list []Entry[P]) *ListingError[P] {
	var seen [Slots + 1]bool
	for k, e := range list {
		if e.Slot < 1 || e.Slot > Slots {
			return listingError(e, false, "the listing names slot %d, outside 1..%d", e.Slot, Slots)
		}
		if seen[e.Slot] {
			return listingError(e, false, "the listing names slot %d twice; each slot is read once", e.Slot)
		}
		seen[e.Slot] = true
		if k > 0 {
			p := list[k-1]
			if p.MarkedMs > e.MarkedMs || (p.MarkedMs == e.MarkedMs && p.Slot > e.Slot) {
				return listingError(e, false, "the listing puts slot %d (marked %dms) after slot %d (marked %dms): entries go by mark, then slot",
					e.Slot, e.MarkedMs, p.Slot, p.MarkedMs)
			}
		}
	}
	return nil
}

// listedByAny reports whether entry e is the row of one of the enqueues
// (indexes into the history) in may.
func (x *Listings[P]) listedByAny(e Entry[P], may []int) bool {
	for _, i := range may {
		if ListedBy(e, x.ops[i].Input) {
			return true
		}
	}
	return false
}

// notHeld is the violation of listing l showing entry e, a row its slot
// did not hold during the call, saying why: no enqueue sent that row; its
// enqueue failed, came too late, or its row had ended before the call
// (C13); or the table was closed before the call (C11).
func (x *Listings[P]) notHeld(l TimedCrOp[P], e Entry[P]) *ListingError[P] {
	why := "no enqueue of that token sent that row"
	for _, o := range x.ops {
		if ListedBy(e, o.Input) {
			why = "its enqueue answered " + o.Output.Result.String() + ", was called after the listing returned, or its row was taken, finished, closed or claimed again before the listing was called"
			if !o.Unknown && o.Output.Result == OK && o.Call < l.Return {
				why = "its row was taken, finished, closed or claimed again before the listing was called"
			}
			break
		}
	}
	inv := "C13"
	for _, o := range x.ops {
		if o.Input.Kind == CrClose && !o.Unknown && o.Return < l.Call {
			inv, why = "C11", "the table was closed before the listing was called"
		}
	}
	err := listingError(e, false, "the listing shows slot %d epoch %d with payload %v marked %dms, a row the slot did not hold during the call: %s",
		e.Slot, e.Epoch, e.Payload, e.MarkedMs, why)
	err.Invariant = inv
	return err
}
