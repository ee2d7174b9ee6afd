//go:build (amd64 || arm64) && !purego && !race

package seam

import "unsafe"

// Without the race detector there is nothing to tell it. The race methods are
// behind the constant, so they cost an operation nothing, not even inlining
// budget.
const pairRace = false

func pairRaceAcquire(unsafe.Pointer)      {}
func pairRaceReleaseMerge(unsafe.Pointer) {}
