package credits

import "github.com/tollgate/tollgate/impl/redis/credits/holder"

// Holder stands in for the process that holds a reservation (see the
// package doc): an id of 128 bits from crypto/rand, which the table records
// in every row the holder reserves and compares on Enqueue and Release. The
// id is the holder's capability: a client that does not know it cannot
// enqueue into or release the holder's reservations. Nothing in the table's
// answers (Enqueued, Snapshot) reveals an id; a client with the table's
// Redis credentials can still read the keys themselves (spec/credits.md,
// "The Redis backend", the trust boundary).
//
// A Holder is an immutable value, safe for concurrent use; it is not tied
// to one table. Its liveness is its lease in each table (RenewAt, Exit).
type Holder = holder.Holder

// NewHolder returns a holder with a fresh random id.
func NewHolder() *Holder { return holder.New() }

// ParseHolder returns the holder whose id is id (as Holder.ID wrote it),
// for a process that keeps its holder across a restart of its own. It
// returns an *ArgError for anything but 32 lower-case hex digits.
func ParseHolder(id string) (*Holder, error) {
	h, err := holder.Parse(id)
	if err != nil {
		return nil, &ArgError{Field: "holder", Value: id, Rule: holder.Rule}
	}
	return h, nil
}
