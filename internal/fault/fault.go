// Package fault names the deliberately broken variants (mutants) that
// tollgate's checkers must detect. Each Fault is one bug that has happened in
// real rate limiters or semaphores, written as a small patch against impl/
// (internal/mutants/patches/<name>.patch); go generate turns each patch into
// a mutant package, and internal/sut builds a table of the package a Fault
// names. impl/ itself holds only the correct algorithm.
//
// None, the zero Fault, is the correct implementation.
package fault

import (
	"fmt"
	"strings"
)

// Fault is one injected bug.
type Fault uint8

// None is no fault: the correct implementation.
const None Fault = 0

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
	// CrOneScan: reserve answers exhausted after one pass over the class
	// (the seed's single select_replace pass).
	CrOneScan
	// CrGenWrap: a slot's generation wraps in 3 bits instead of stopping at
	// its cap, so an epoch repeats after seven reservations of one slot.
	CrGenWrap
	// CrBoxBeforePin: enqueue stores its payload box before checking the
	// pin, so a stale token replaces a later reservation's payload.
	CrBoxBeforePin

	// TBPlainStore: a take commits with a plain store instead of a
	// compare-and-swap (lost update).
	TBPlainStore
	// TBTimestampRegress: the stored timestamp becomes the caller's clock even
	// when it is older (the seed's behaviour).
	TBTimestampRegress
	// TBFailClosed: a take gives up after a bounded number of lost races
	// and reports a refusal (the seed's bounded retry; the patch states the
	// bound and why).
	TBFailClosed
	// TBSeedCeil: retry-after is ceil(deficit / rate * 1000) with no
	// correction against the refill formula (the seed's rounding).
	TBSeedCeil
	// TBNoClamp: refill is not clamped to capacity.
	TBNoClamp
	// TBTriePlainAppend: an equal-hash key is appended to its trie chain by
	// a plain store, so a racing append can be lost.
	TBTriePlainAppend
	// TBCASOneHalf: a take's 128-bit compare-and-swap compares only the
	// timestamp half (it reloads the tokens half just before), so two takes
	// in one millisecond both commit and one token is never removed.
	TBCASOneHalf
	// TBFloorAfterKill: a reclaim raises the floor after it has killed the
	// cells it forgets, so a take in between stamps a new bucket behind it.
	TBFloorAfterKill
	// TBReclaimNoFloor: a take that makes a bucket ignores the floor.
	TBReclaimNoFloor
	// TBUnlinkLive: a reclaim unlinks cells it left absent, not dead, so a
	// take that commits to one in between is lost.
	TBUnlinkLive
	// TBCompactNoFreeze: a reclaim compacts an inner node away without
	// freezing its child words, so an insert into it in between is lost.
	TBCompactNoFreeze
	// TBSweepSkipsFrozen: a reclaim that meets a node another reclaim is
	// compacting leaves that node's keys to the other, which judged them
	// at its own clock.
	TBSweepSkipsFrozen

	numFaults
)

var names = [...]string{
	CrNoEpochPin:       "cr-no-epoch-pin",
	CrTwoWriteEnqueue:  "cr-two-write-enqueue",
	CrSweepAll:         "cr-sweep-all",
	CrReleaseNoHolder:  "cr-release-no-holder",
	CrFinishBlind:      "cr-finish-blind",
	CrClassOffByOne:    "cr-class-off-by-one",
	CrReserveNoCAS:     "cr-reserve-no-cas",
	CrOneScan:          "cr-one-scan",
	CrGenWrap:          "cr-gen-wrap",
	CrBoxBeforePin:     "cr-box-before-pin",
	TBPlainStore:       "tb-plain-store",
	TBTimestampRegress: "tb-timestamp-regress",
	TBFailClosed:       "tb-fail-closed",
	TBSeedCeil:         "tb-seed-ceil",
	TBNoClamp:          "tb-no-clamp",
	TBTriePlainAppend:  "tb-trie-plain-append",
	TBCASOneHalf:       "tb-cas-one-half",
	TBFloorAfterKill:   "tb-floor-after-kill",
	TBReclaimNoFloor:   "tb-reclaim-no-floor",
	TBUnlinkLive:       "tb-unlink-live",
	TBCompactNoFreeze:  "tb-compact-no-freeze",
	TBSweepSkipsFrozen: "tb-sweep-skips-frozen",
}

// String is the fault's stable name, as the mutants command prints it, and
// the base name of its patch; None is "none".
func (f Fault) String() string {
	if f == None {
		return "none"
	}
	if f > 0 && f < numFaults {
		return names[f]
	}
	return fmt.Sprintf("fault(%d)", uint8(f))
}

// Credits reports whether f is a credit-table fault (otherwise it is a
// token-bucket fault).
func (f Fault) Credits() bool { return f >= CrNoEpochPin && f <= CrBoxBeforePin }

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
