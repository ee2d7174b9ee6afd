// Package holder is the identity of a holder of impl/redis/credits: the
// stand-in for a calling process, a 128-bit random id. It is a package of
// its own so that the credit table and every mutant copy of it
// (internal/mutants) share one Holder type.
package holder

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// Holder is a holder's identity: 128 bits from crypto/rand, written as 32
// lower-case hex digits (ID). The credit table records it in every row the
// holder reserves and compares it on Enqueue and Release, so it is the
// holder's capability: a client that does not know it cannot enqueue into
// or release the holder's reservations.
//
// A Holder is an immutable value, safe for concurrent use, and not tied to
// one table. Its liveness is its lease in each table (credits.RenewAt,
// credits.Exit).
type Holder struct {
	id string
}

// New returns a holder with a fresh random id.
func New() *Holder {
	var b [16]byte
	rand.Read(b[:]) // never fails: crypto/rand crashes the program rather than return an error
	return &Holder{id: hex.EncodeToString(b[:])}
}

// Rule is what a holder id must be.
const Rule = "must be 32 lower-case hex digits"

// Parse returns the holder whose id is id (as ID wrote it), or an error for
// anything but 32 lower-case hex digits.
func Parse(id string) (*Holder, error) {
	ok := len(id) == 32
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
	}
	if !ok {
		return nil, fmt.Errorf("holder: id %q %s", id, Rule)
	}
	return &Holder{id: id}, nil
}

// ID is the holder's id: its capability, to be kept as secret as the
// reservations it guards.
func (h *Holder) ID() string { return h.id }

// String names the holder by the first 4 of its 32 hex digits (16 of its
// 128 bits), so that a log line does not carry the capability.
func (h *Holder) String() string { return "holder{" + h.id[:4] + "…}" }
