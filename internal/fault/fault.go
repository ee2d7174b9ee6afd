// Package fault names the deliberately broken variants (mutants) that
// tollgate's checkers must detect. Each Fault is one bug that has happened in
// real rate limiters or semaphores; impl/credits and impl/tokenbucket carry a
// branch for each, taken only when a table was built with that fault.
//
// A Set can only be built inside this module (its field is unexported and the
// package is internal), so no user of impl/ can switch a fault on: the zero
// Set, the only one reachable from outside, is the correct implementation.
package fault

import (
	"fmt"
	"strings"
)

// Fault is one injected bug.
type Fault uint8

// Credit-table faults.
const (
	// CrNoEpochPin: enqueue, take, finish and release match the slot and
	// state but not the epoch, so a stale token lands on a recycled slot.
	CrNoEpochPin Fault = iota + 1
	// CrTwoWriteEnqueue: enqueue installs the payload in the reserved row with
	// one compare-and-swap, then publishes "enqueued" with a plain store.
	CrTwoWriteEnqueue
	// CrSweepAll: sweep also frees enqueued and processing rows of exited
	// holders, dropping their payloads.
	CrSweepAll
	// CrReleaseNoHolder: release checks the epoch but not the holder.
	CrReleaseNoHolder
	// CrFinishBlind: finish stores "free" without checking state or epoch, so
	// a second finish frees whatever reservation holds the slot by then.
	CrFinishBlind
	// CrClassOffByOne: the general class reaches slot 27, one internal slot.
	CrClassOffByOne
	// CrReserveNoCAS: reserve reads a free slot and claims it with a plain
	// store, so two reservers can both win it.
	CrReserveNoCAS

	// TBPlainStore: a take commits with a plain store instead of a
	// compare-and-swap (lost update).
	TBPlainStore
	// TBTimestampRegress: the stored timestamp becomes the caller's clock even
	// when it is older (the seed's behaviour).
	TBTimestampRegress
	// TBFailClosed: a take gives up after a bounded number of commit attempts
	// and reports a refusal (the seed's bounded retry; see
	// FailClosedAttempts for the bound).
	TBFailClosed
	// TBSeedCeil: retry-after is ceil(deficit / rate * 1000) with no
	// correction against the refill formula (the seed's rounding).
	TBSeedCeil
	// TBNoClamp: refill is not clamped to capacity.
	TBNoClamp

	numFaults
)

// FailClosedAttempts is the number of commit attempts the TBFailClosed
// mutant makes before it refuses. The seed gives up after 100; the flaw is
// the same at any bound, only rarer. On two cores, 200 storms of 400 takes
// lost about 1,400 races but never two in a row for one take, so a bound of
// 2 went unseen; with 1, the first lost race before the bucket is empty
// shows as a refusal while tokens remain.
const FailClosedAttempts = 1

var names = [...]string{
	CrNoEpochPin:       "cr-no-epoch-pin",
	CrTwoWriteEnqueue:  "cr-two-write-enqueue",
	CrSweepAll:         "cr-sweep-all",
	CrReleaseNoHolder:  "cr-release-no-holder",
	CrFinishBlind:      "cr-finish-blind",
	CrClassOffByOne:    "cr-class-off-by-one",
	CrReserveNoCAS:     "cr-reserve-no-cas",
	TBPlainStore:       "tb-plain-store",
	TBTimestampRegress: "tb-timestamp-regress",
	TBFailClosed:       "tb-fail-closed",
	TBSeedCeil:         "tb-seed-ceil",
	TBNoClamp:          "tb-no-clamp",
}

// String is the fault's stable name, as the mutants command prints it.
func (f Fault) String() string {
	if f > 0 && f < numFaults {
		return names[f]
	}
	return fmt.Sprintf("fault(%d)", uint8(f))
}

// Credits reports whether f is a credit-table fault (otherwise it is a
// token-bucket fault).
func (f Fault) Credits() bool { return f >= CrNoEpochPin && f <= CrReserveNoCAS }

// All lists every fault in declaration order.
func All() []Fault {
	out := make([]Fault, 0, numFaults-1)
	for f := Fault(1); f < numFaults; f++ {
		out = append(out, f)
	}
	return out
}

// Parse returns the fault with the given name.
func Parse(name string) (Fault, error) {
	for _, f := range All() {
		if f.String() == name {
			return f, nil
		}
	}
	known := make([]string, 0, len(names))
	for _, f := range All() {
		known = append(known, f.String())
	}
	return 0, fmt.Errorf("fault: unknown mutant %q (known: %s)", name, strings.Join(known, ", "))
}

// Set is a set of faults. The zero Set is empty: the correct implementation.
type Set struct{ bits uint32 }

// Of returns the set holding fs.
func Of(fs ...Fault) Set {
	var s Set
	for _, f := range fs {
		s.bits |= 1 << f
	}
	return s
}

// Has reports whether f is in s.
func (s Set) Has(f Fault) bool { return s.bits&(1<<f) != 0 }

// Empty reports whether s holds no fault.
func (s Set) Empty() bool { return s.bits == 0 }
