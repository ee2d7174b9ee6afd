package credits

import (
	"crypto/rand"
	"encoding/hex"
)

// Holder stands in for the process that holds a reservation (see the
// package doc): an id of 128 bits from crypto/rand, written as 32
// lower-case hex digits, which the table records in every row the holder
// reserves and compares on Enqueue and Release. The id is the holder's
// capability: a client that does not know it cannot enqueue into or
// release the holder's reservations. Nothing in the table's answers
// (Enqueued, Snapshot) reveals an id; a client with the table's Redis
// credentials can still read the keys themselves (spec/credits.md, "The
// Redis backend", the trust boundary).
//
// A Holder is an immutable value, safe for concurrent use; it is not tied
// to one table. Its liveness is its lease in each table (RenewAt, Exit).
type Holder struct {
	id string
}

// NewHolder returns a holder with a fresh random id.
func NewHolder() *Holder {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand: it crashes the program rather than return an error)
	return &Holder{id: hex.EncodeToString(b[:])}
}

// ParseHolder returns the holder whose id is id (as ID wrote it), for a
// process that keeps its holder across a restart of its own. It returns an
// *ArgError for anything but 32 lower-case hex digits.
func ParseHolder(id string) (*Holder, error) {
	if len(id) != 32 {
		return nil, &ArgError{Field: "holder", Value: id, Rule: "must be 32 lower-case hex digits"}
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return nil, &ArgError{Field: "holder", Value: id, Rule: "must be 32 lower-case hex digits"}
		}
	}
	return &Holder{id: id}, nil
}

// ID is the holder's id: its capability, to be kept as secret as the
// reservations it guards.
func (h *Holder) ID() string { return h.id }

// String names the holder by the first 4 of its 32 hex digits (16 of its
// 128 bits), so that a log line does not carry the capability.
func (h *Holder) String() string { return "credits.Holder{" + h.id[:4] + "…}" }
