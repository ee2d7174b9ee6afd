package model

import (
	"fmt"
	"slices"
)

// Slot counts of the credit table (C1).
const (
	Slots         = 32
	GeneralSlots  = 26 // slots 1..26
	InternalSlots = 6  // slots 27..32
)

// Class is the admission class of a slot. The zero value is not a class.
type Class uint8

// The two classes (C1).
const (
	General  Class = 1
	Internal Class = 2
)

func (c Class) String() string {
	switch c {
	case General:
		return "general"
	case Internal:
		return "internal"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// SlotRange returns the first and last slot of class c (C1). It panics on a
// value that is not a class: that is a defect in the caller (C12).
func (c Class) SlotRange() (first, last int) {
	switch c {
	case General:
		return 1, GeneralSlots
	case Internal:
		return GeneralSlots + 1, Slots
	}
	panic(ClassDefect(c).Error())
}

// ClassOf returns the class that owns slot n; it panics outside 1..32 (C12).
func ClassOf(n int) Class {
	checkSlot(n)
	if n <= GeneralSlots {
		return General
	}
	return Internal
}

// RowState is the state of one slot row (spec/credits.md §1).
type RowState uint8

// Row states.
const (
	Free RowState = iota
	Reserved
	Enqueued
	Processing
)

func (s RowState) String() string {
	switch s {
	case Free:
		return "free"
	case Reserved:
		return "reserved"
	case Enqueued:
		return "enqueued"
	case Processing:
		return "processing"
	}
	return fmt.Sprintf("RowState(%d)", uint8(s))
}

// HolderID names a holder (the stand-in for the calling process). Zero is not
// a holder.
type HolderID uint64

// Token names one reservation: its slot and its epoch (C3). The zero Token is
// not a token.
type Token struct {
	Slot  int
	Epoch uint64
}

// Result is the outcome of Reserve and Enqueue.
type Result uint8

// Results. OK is the zero value.
const (
	OK Result = iota
	Exhausted
	Lost
	NoTable
)

func (r Result) String() string {
	switch r {
	case OK:
		return "ok"
	case Exhausted:
		return "exhausted"
	case Lost:
		return "lost"
	case NoTable:
		return "no_table"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Row is one slot. A free row is the zero Row (C4: a row carries a payload
// exactly when it is enqueued or processing; HasPayload says so).
type Row[P comparable] struct {
	State      RowState
	Holder     HolderID
	Epoch      uint64
	MarkedMs   int64
	Payload    P
	HasPayload bool
}

// Entry is one row listed by Enqueued.
type Entry[P comparable] struct {
	Slot     int
	Epoch    uint64
	MarkedMs int64
	Payload  P
}

// Counts is the number of rows of one class in each state.
type Counts struct {
	Free, Reserved, Enqueued, Processing int
}

// Total is the sum of the four counts.
func (c Counts) Total() int { return c.Free + c.Reserved + c.Enqueued + c.Processing }

// Snapshot is the per-class state count of a table.
type Snapshot struct {
	General, Internal Counts
}

// Bounds is the declared split (C1).
type Bounds struct {
	General, Internal, Total int
}

// TableBounds is the split of every table.
var TableBounds = Bounds{General: GeneralSlots, Internal: InternalSlots, Total: Slots}

// Credits is the state of one credit table together with the liveness of the
// holders that use it. The zero value is a live table with every slot free,
// no epoch issued and every holder alive. It is a value: methods return a new
// state and never change the receiver.
type Credits[P comparable] struct {
	rows      [Slots]Row[P]
	lastEpoch uint64     // the largest epoch issued so far (C3)
	dead      []HolderID // sorted; copied on write
	closed    bool
}

// Row returns slot n's row (C12: panics outside 1..32).
func (s Credits[P]) Row(n int) Row[P] {
	checkSlot(n)
	return s.rows[n-1]
}

// Closed reports whether the table is gone (C11).
func (s Credits[P]) Closed() bool { return s.closed }

// LastEpoch is the largest epoch issued so far.
func (s Credits[P]) LastEpoch() uint64 { return s.lastEpoch }

// Alive reports whether holder h has not exited.
func (s Credits[P]) Alive(h HolderID) bool {
	_, found := slices.BinarySearch(s.dead, h)
	return !found
}

// Equal reports whether two states are the same.
func (s Credits[P]) Equal(u Credits[P]) bool {
	return s.rows == u.rows && s.lastEpoch == u.lastEpoch && s.closed == u.closed &&
		slices.Equal(s.dead, u.dead)
}

// Reserve claims the lowest free slot of class c for holder h under the next
// epoch (C1, C2, C3). It returns Exhausted when every slot of c is in use and
// NoTable after Close; both leave the state unchanged.
func (s Credits[P]) Reserve(h HolderID, c Class) (Credits[P], Token, Result) {
	checkHolder(h)
	first, last := c.SlotRange()
	if s.closed {
		return s, Token{}, NoTable
	}
	for n := first; n <= last; n++ {
		if s.rows[n-1].State == Free {
			tok := Token{Slot: n, Epoch: s.lastEpoch + 1}
			next, ok := s.ReserveSlot(h, tok)
			if !ok {
				panic("model: free slot refused a claim")
			}
			return next, tok, OK
		}
	}
	return s, Token{}, Exhausted
}

// ReserveSlot is Reserve as a concurrent implementation may perform it: it
// claims tok.Slot under tok.Epoch for h (C2). It reports false, leaving the
// state unchanged, when the table is closed, the slot is not free, or another
// row carries the same epoch. Reserve uses it with the lowest free slot and
// the next epoch; the linearizability checker uses it to accept a reserve
// that claimed any free slot of its class with whatever epoch the
// implementation drew. A state keeps only its rows, so the global part of C3
// (no epoch is ever issued twice, even after its row is freed) is checked by
// the checkers over a whole history, not here.
func (s Credits[P]) ReserveSlot(h HolderID, tok Token) (Credits[P], bool) {
	checkHolder(h)
	checkToken(tok)
	if s.closed || s.rows[tok.Slot-1].State != Free {
		return s, false
	}
	for _, r := range s.rows {
		if r.State != Free && r.Epoch == tok.Epoch {
			return s, false
		}
	}
	s.rows[tok.Slot-1] = Row[P]{State: Reserved, Holder: h, Epoch: tok.Epoch}
	s.lastEpoch = max(s.lastEpoch, tok.Epoch)
	return s, true
}

// UnseenEpoch is the epoch of a row claimed by ReserveUnseen: no token
// carries it (a token's epoch is never 0), so no transition pinned to an
// epoch applies to the row.
const UnseenEpoch uint64 = 0

// ReserveUnseen is a reservation whose answer nobody saw: a reserve sent to a
// server that never answered, which may have claimed a slot under an epoch
// its caller never learned. It claims free slot n for h, as ReserveSlot
// does, under UnseenEpoch, so that only a sweep after h's exit can free the
// row (C10), and it leaves LastEpoch as it is: the epoch issued is unknown.
// It reports false, leaving the state unchanged, when the table is closed or
// slot n is not free. The linearizability checker uses it for the states an
// unknown reserve may have left.
func (s Credits[P]) ReserveUnseen(h HolderID, n int) (Credits[P], bool) {
	checkHolder(h)
	checkSlot(n)
	if s.closed || s.rows[n-1].State != Free {
		return s, false
	}
	s.rows[n-1] = Row[P]{State: Reserved, Holder: h, Epoch: UnseenEpoch}
	return s, true
}

// Exhausted reports whether every slot of class c is in use (C2).
func (s Credits[P]) Exhausted(c Class) bool {
	first, last := c.SlotRange()
	for n := first; n <= last; n++ {
		if s.rows[n-1].State == Free {
			return false
		}
	}
	return true
}

// pinned reports whether slot tok.Slot holds the reservation tok in one of
// the given states (C3: every transition after reserve matches the epoch).
func (s Credits[P]) pinned(tok Token, states ...RowState) bool {
	r := s.rows[tok.Slot-1]
	return r.Epoch == tok.Epoch && slices.Contains(states, r.State)
}

// Enqueue publishes payload in the row reserved by tok and moves it from
// reserved to enqueued, marked at nowMs (C4, C5). Only the holder that
// reserved, only with that epoch, only from reserved: otherwise Lost. NoTable
// after Close. Refusals leave the state unchanged.
func (s Credits[P]) Enqueue(h HolderID, tok Token, payload P, nowMs int64) (Credits[P], Result) {
	checkHolder(h)
	checkToken(tok)
	if s.closed {
		return s, NoTable
	}
	if !s.pinned(tok, Reserved) || s.rows[tok.Slot-1].Holder != h {
		return s, Lost
	}
	r := &s.rows[tok.Slot-1]
	r.State, r.MarkedMs, r.Payload, r.HasPayload = Enqueued, nowMs, payload, true
	return s, OK
}

// Take moves the enqueued row of tok to processing and returns its payload,
// which stays in the row (C6, C7). It reports false when the row is not
// enqueued under that epoch, or the table is closed.
func (s Credits[P]) Take(tok Token) (Credits[P], P, bool) {
	checkToken(tok)
	var zero P
	if s.closed || !s.pinned(tok, Enqueued) {
		return s, zero, false
	}
	r := &s.rows[tok.Slot-1]
	r.State = Processing
	return s, r.Payload, true
}

// Finish frees the row of tok if it is processing or, defensively, enqueued
// under that epoch (C8). It reports whether it freed the row; a second Finish
// of the same token, or one after Close, is a no-op reporting false.
func (s Credits[P]) Finish(tok Token) (Credits[P], bool) {
	checkToken(tok)
	if s.closed || !s.pinned(tok, Processing, Enqueued) {
		return s, false
	}
	s.rows[tok.Slot-1] = Row[P]{}
	return s, true
}

// Release is the caller-side free of a reservation that was never enqueued
// (C9): it frees the row only when it is reserved under tok's epoch by h.
// It reports whether it freed the row.
func (s Credits[P]) Release(h HolderID, tok Token) (Credits[P], bool) {
	checkHolder(h)
	checkToken(tok)
	if s.closed || !s.pinned(tok, Reserved) || s.rows[tok.Slot-1].Holder != h {
		return s, false
	}
	s.rows[tok.Slot-1] = Row[P]{}
	return s, true
}

// sweepable reports whether slot n of a live table holds a reserved row
// whose holder has exited: the rows a sweep frees, only these (C10) and
// every one of them (C17).
func (s Credits[P]) sweepable(n int) bool {
	r := s.rows[n-1]
	return !s.closed && r.State == Reserved && !s.Alive(r.Holder)
}

// Sweep frees every reserved row whose holder has exited and returns how many
// it freed: only those (C10), and all of them (C17). Enqueued and processing
// rows are never swept.
func (s Credits[P]) Sweep() (Credits[P], int) {
	freed := 0
	for n := 1; n <= Slots; n++ {
		if s.sweepable(n) {
			s.rows[n-1] = Row[P]{}
			freed++
		}
	}
	return s, freed
}

// SweepSlot frees slot n if it is reserved by an exited holder, reporting
// whether it did: one of the per-row steps a concurrent Sweep is made of
// (spec/credits.md §5). Applied to every slot, it leaves what Sweep leaves.
func (s Credits[P]) SweepSlot(n int) (Credits[P], bool) {
	checkSlot(n)
	if !s.sweepable(n) {
		return s, false
	}
	s.rows[n-1] = Row[P]{}
	return s, true
}

// Unswept reports whether the reservation tok is still reserved, by a holder
// that has exited, on a live table: a row that a sweep ending in this state
// has left behind though it had to free it (C17). Sweep leaves none. A
// concurrent sweep frees row by row (SweepSlot) and answers only for the
// reservations it owes, those whose reserve and whose holder's exit both
// returned before it was called (spec/credits.md C17); the history checker
// asks Unswept of each of them once the sweep's row steps are taken.
func (s Credits[P]) Unswept(tok Token) bool {
	checkToken(tok)
	return s.sweepable(tok.Slot) && s.rows[tok.Slot-1].Epoch == tok.Epoch
}

// Exit marks holder h dead from now on (a process that exited). Exiting
// twice is harmless.
func (s Credits[P]) Exit(h HolderID) Credits[P] {
	checkHolder(h)
	i, found := slices.BinarySearch(s.dead, h)
	if found {
		return s
	}
	s.dead = slices.Insert(slices.Clone(s.dead), i, h)
	return s
}

// Close ends the table: the owner died and the table died with it (C11).
func (s Credits[P]) Close() Credits[P] {
	s.closed = true
	return s
}

// Enqueued lists the enqueued rows, oldest mark first, ties by slot (C13).
// A closed table lists nothing.
func (s Credits[P]) Enqueued() []Entry[P] {
	if s.closed {
		return nil
	}
	var out []Entry[P]
	for i, r := range s.rows {
		if r.State == Enqueued {
			out = append(out, Entry[P]{Slot: i + 1, Epoch: r.Epoch, MarkedMs: r.MarkedMs, Payload: r.Payload})
		}
	}
	SortEntries(out)
	return out
}

// ListedBy reports whether entry e of an enqueued listing is the row that
// enqueue in would make: the same slot and epoch (the token's), payload and
// mark. Each entry of a listing is a row its slot held during the call
// (C13), so under concurrency every entry must be the row of some enqueue
// of its token; an entry that pairs one reservation's token with another's
// payload or mark is a row the slot never held.
func ListedBy[P comparable](e Entry[P], in CrInput[P]) bool {
	return in.Kind == CrEnqueue && in.Token.Slot == e.Slot && in.Token.Epoch == e.Epoch &&
		in.Payload == e.Payload && in.NowMs == e.MarkedMs
}

// SortEntries orders entries oldest mark first, ties by slot (C13).
func SortEntries[P comparable](es []Entry[P]) {
	slices.SortFunc(es, func(a, b Entry[P]) int {
		if a.MarkedMs != b.MarkedMs {
			if a.MarkedMs < b.MarkedMs {
				return -1
			}
			return 1
		}
		return a.Slot - b.Slot
	})
}

// Snapshot counts the rows of each class by state (C14). A closed table
// reports zero counts.
func (s Credits[P]) Snapshot() Snapshot {
	var snap Snapshot
	if s.closed {
		return snap
	}
	for i, r := range s.rows {
		c := &snap.General
		if i >= GeneralSlots {
			c = &snap.Internal
		}
		switch r.State {
		case Free:
			c.Free++
		case Reserved:
			c.Reserved++
		case Enqueued:
			c.Enqueued++
		case Processing:
			c.Processing++
		}
	}
	return snap
}
