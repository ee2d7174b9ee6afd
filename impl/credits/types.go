package credits

import "fmt"

// The value types of the table's API. They hold no shared memory; every
// word that goroutines share is in credits.go and holder.go.

// Slot counts (C1).
const (
	Slots         = 32
	GeneralSlots  = 26
	InternalSlots = 6
)

// Class is an admission class. The zero value is not a class; passing it is
// a defect and panics (C12).
type Class uint8

// The two classes.
const (
	General  Class = 1 // slots 1..26
	Internal Class = 2 // slots 27..32
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

// Bounds is the declared split of the table (C1).
type Bounds struct {
	General, Internal, Total int
}

// TableBounds reports the split every table has: 26 general, 6 internal,
// 32 in all.
func TableBounds() Bounds {
	return Bounds{General: GeneralSlots, Internal: InternalSlots, Total: Slots}
}

// Token names one reservation: the slot it claimed and its epoch. The zero
// Token names none; using it is a defect and panics (C12).
type Token struct {
	Slot  int
	Epoch uint64
}

// Result is the outcome of Reserve and Enqueue.
type Result uint8

// The results. OK is the zero value.
const (
	OK        Result = iota
	Exhausted        // Reserve: every slot of the class is in use
	Lost             // Enqueue: the reservation is no longer this holder's
	NoTable          // the table was closed
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

// Entry is one enqueued row as Enqueued lists it.
type Entry[P any] struct {
	Token    Token
	MarkedMs int64
	Payload  P
}

// Counts is the number of rows of one class in each state.
type Counts struct {
	Free, Reserved, Enqueued, Processing int
}

// Snapshot is the per-class usage of a table. A closed table (C11) holds
// nothing: its counts are all zero and Closed is true, so that a snapshot
// taken after the owner stopped does not read as every slot leaked.
type Snapshot struct {
	General, Internal Counts
	Closed            bool
}
