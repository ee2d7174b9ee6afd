// Package fault names the deliberately broken variants (mutants) that
// tollgate's checkers must detect. Each Fault is one bug that has happened in
// real rate limiters or semaphores, written as a small patch against impl/
// (internal/mutants/patches/<name>.patch); go generate turns each patch into
// a mutant package, and internal/sut builds a table of the package a Fault
// names. impl/ itself holds only the correct algorithm. The faults of the
// Redis-backed tables (AllRedis) are kept apart from the in-memory ones
// (All): their checks need a server.
//
// None, the zero Fault, is the correct implementation.
package fault

import (
	"fmt"
	"path"
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
	// CrTwinEnqueueLost: of two enqueues of one reservation, the one whose
	// box lost the install answers Lost while the row is still reserved.
	CrTwinEnqueueLost
	// CrReserveStrands: reserve stores the slot's holder word before its
	// compare-and-swap, so a reserver that loses the race overwrites the
	// winner's, and the winner's row is never swept once it exits.
	CrReserveStrands
	// CrPublishedLate: take and finish mark a box published after their
	// compare-and-swap moves the row on, so an enqueue helped by its twin
	// can find the row free and the flag unset, and answer Lost.
	CrPublishedLate
	// CrEnqueuedTorn: the list of enqueued rows drops its check that the
	// row word is unchanged around the box load, so it can pair a token
	// with a later reservation's payload.
	CrEnqueuedTorn

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
	// TBFrozenNextLate: a reclaim publishes a frozen wrapper before it
	// writes the wrapper's next, so a walk in between takes the frozen
	// word for empty and a compaction it helps drops the key's cells.
	TBFrozenNextLate
	// TBPeekTorn: peek and retry_after load the bucket word's halves with
	// two 64-bit loads, so a take in between pairs one state's tokens with
	// another's timestamp.
	TBPeekTorn

	// Faults of the Redis-backed tables (impl/redis/...): their checks need
	// a redis-server, so All leaves them out and AllRedis lists them.

	// RTBTwoTrips: a Redis take reads the bucket in one call and writes the
	// result in a second, so two clients between them both take.
	RTBTwoTrips
	// RTBToString: the Redis library formats floats with tostring (%.14g),
	// so a stored or returned token count loses its last bits.
	RTBToString
	// RTBRetryOnTimeout: the Redis table's client keeps go-redis's default
	// retries, so a take whose reply timed out is sent, and taken, again.
	RTBRetryOnTimeout
	// RTBTimestampRegress: the Redis take stores the caller's clock as the
	// bucket's timestamp even when it is older.
	RTBTimestampRegress
	// RCRNoEpochPin: the Redis credit table's functions match a token's
	// slot and state but not its epoch, so a stale token (a finish sent
	// again after a timed-out reply) lands on the slot's next reservation.
	RCRNoEpochPin

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
	CrTwinEnqueueLost:  "cr-twin-enqueue-lost",
	CrReserveStrands:   "cr-reserve-strands",
	CrPublishedLate:    "cr-published-late",
	CrEnqueuedTorn:     "cr-enqueued-torn",
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
	TBFrozenNextLate:   "tb-frozen-next-late",
	TBPeekTorn:         "tb-peek-torn",

	RTBTwoTrips:         "rtb-two-trips",
	RTBToString:         "rtb-tostring",
	RTBRetryOnTimeout:   "rtb-retry-on-timeout",
	RTBTimestampRegress: "rtb-timestamp-regress",
	RCRNoEpochPin:       "rcr-no-epoch-pin",
}

// packages maps a fault name's prefix to the package of impl/ its patch
// changes.
var packages = []struct{ prefix, dir string }{
	{"cr-", "impl/credits"},
	{"tb-", "impl/tokenbucket"},
	{"rtb-", "impl/redis/tokenbucket"},
	{"rcr-", "impl/redis/credits"},
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

// Package is the directory of the package of impl/ that f's patch changes,
// by its name's prefix: "impl/credits" (cr-), "impl/tokenbucket" (tb-),
// "impl/redis/tokenbucket" (rtb-), "impl/redis/credits" (rcr-); "" for
// None and for a value that names no fault.
func (f Fault) Package() string {
	if f == None || f >= numFaults {
		return ""
	}
	for _, p := range packages {
		if strings.HasPrefix(f.String(), p.prefix) {
			return p.dir
		}
	}
	panic(fmt.Sprintf("fault: %s has no known prefix (defect)", f))
}

// Credits reports whether f is a fault of a credit table, in memory or in
// Redis (otherwise it is a token-bucket fault).
func (f Fault) Credits() bool { return path.Base(f.Package()) == "credits" }

// Redis reports whether f is a fault of a Redis-backed table
// (impl/redis/...), whose checks need a redis-server.
func (f Fault) Redis() bool { return strings.HasPrefix(f.Package(), "impl/redis/") }

// All lists every fault of the in-memory tables (impl/credits,
// impl/tokenbucket) in declaration order: the faults every in-process
// checking layer runs against.
func All() []Fault { return list(false) }

// AllRedis lists every fault of the Redis-backed tables in declaration
// order.
func AllRedis() []Fault { return list(true) }

// Every lists All, then AllRedis.
func Every() []Fault { return append(All(), AllRedis()...) }

func list(redis bool) []Fault {
	var out []Fault
	for f := Fault(1); f < numFaults; f++ {
		if f.Redis() == redis {
			out = append(out, f)
		}
	}
	return out
}

// Parse returns the fault with the given name.
func Parse(name string) (Fault, error) {
	for _, f := range Every() {
		if f.String() == name {
			return f, nil
		}
	}
	known := make([]string, 0, len(names))
	for _, f := range Every() {
		known = append(known, f.String())
	}
	return 0, fmt.Errorf("fault: unknown mutant %q (known: %s)", name, strings.Join(known, ", "))
}
