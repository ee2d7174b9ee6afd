package credits

import "github.com/tollgate/tollgate/internal/seam"

// Holder stands in for the process that holds a reservation: Go has no
// process identifiers, so a caller creates a Holder, passes it to Reserve,
// Enqueue and Release, and calls Exit when it goes away. Sweep frees the
// reservations of exited holders that never enqueued.
//
// A Holder is safe for concurrent use, with one rule a process keeps by
// nature: the calls that use one token (Enqueue, Release) must not overlap
// each other; overlapping ones panic. Exiting is final.
type Holder struct {
	// serial names the holder in a reserved slot word's hi half. It is
	// unique for the life of the process (a 64-bit count that never wraps
	// in practice) and never 0, so no stale slot word can name a later
	// holder.
	serial uint64
	// dead moves false → true once, by Exit, and never back. Sweep reads it
	// after loading a reserved row: a holder seen dead stays dead, so the
	// sweep's compare-and-swap frees a row that no live holder can reach.
	dead seam.Bool
}

// serials is the last holder serial handed out; it only grows, by Add.
var serials seam.Uint64

// NewHolder returns a live holder.
func NewHolder() *Holder { return &Holder{serial: serials.Add(1)} }

// Serial is the holder's identity as a reserved slot word records it: unique
// for the life of the process and never 0.
func (h *Holder) Serial() uint64 { return h.serial }

// Exit marks the holder dead. Reservations it made and never enqueued become
// sweepable; rows it enqueued stay with the owner. Calling Exit twice is
// harmless.
func (h *Holder) Exit() { h.dead.Store(true) }

// Alive reports whether Exit has not been called.
func (h *Holder) Alive() bool { return !h.dead.Load() }
