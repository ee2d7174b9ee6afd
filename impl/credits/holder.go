package credits

import "github.com/tollgate/tollgate/internal/seam"

// Holder stands in for the process that holds a reservation: Go has no
// process identifiers, so a caller creates a Holder, passes it to Reserve,
// Enqueue and Release, and calls Exit when it goes away. A Holder's identity
// is its pointer. Sweep frees the reservations of exited holders that never
// enqueued.
//
// A Holder is safe for concurrent use. Exiting is final.
type Holder struct {
	// dead moves false → true once, by Exit, and never back. Sweep reads it
	// after loading a reserved row: a holder seen dead stays dead, so the
	// sweep's compare-and-swap frees a row that no live holder can reach.
	dead seam.Bool
}

// NewHolder returns a live holder.
func NewHolder() *Holder { return new(Holder) }

// Exit marks the holder dead. Reservations it made and never enqueued become
// sweepable; rows it enqueued stay with the owner. Calling Exit twice is
// harmless.
func (h *Holder) Exit() { h.dead.Store(true) }

// Alive reports whether Exit has not been called.
func (h *Holder) Alive() bool { return !h.dead.Load() }
