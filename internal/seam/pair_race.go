//go:build (amd64 || arm64) && !purego && race

package seam

import (
	"runtime"
	"unsafe"
)

// The race detector sees sync/atomic's operations as synchronization but not
// the assembly of a Pair's 128-bit operations; these tell it. A write
// releases before it runs (merging, as every write of a pair is a
// read-modify-write in the hardware) and every operation acquires after it
// ran, so a write and an operation that observes it are ordered for the race
// detector as they are in the memory.

const pairRace = true

func pairRaceAcquire(addr unsafe.Pointer)      { runtime.RaceAcquire(addr) }
func pairRaceReleaseMerge(addr unsafe.Pointer) { runtime.RaceReleaseMerge(addr) }
