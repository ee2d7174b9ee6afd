//go:build race

package interleave

// raceEnabled: the race detector slows the explorer about tenfold; the
// costliest tests explore less under it.
const raceEnabled = true
