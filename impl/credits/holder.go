package credits

import "sync/atomic"

// Holder stands in for the process that holds a reservation: Go has no
// process identifiers, so a caller creates a Holder, passes it to Reserve,
// Enqueue and Release, and calls Exit when it goes away. A Holder's identity
// is its pointer. Sweep frees the reservations of exited holders that never
// enqueued.
//
// A Holder is safe for concurrent use. Exiting is final.
type Holder struct {
	dead atomic.Bool
}

// NewHolder returns a live holder.
func NewHolder() *Holder { return new(Holder) }

// Exit marks the holder dead. Reservations it made and never enqueued become
// sweepable; rows it enqueued stay with the owner. Calling Exit twice is
// harmless.
func (h *Holder) Exit() { h.dead.Store(true) }

// Alive reports whether Exit has not been called.
func (h *Holder) Alive() bool { return !h.dead.Load() }
