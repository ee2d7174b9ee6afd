//go:build race

package interleave

// raceEnabled: the race detector slows the explorer about tenfold; the
// costliest tests explore less under it, and the sweeps that CI's explore
// step runs whole without it are skipped (skipSweepUnderRace).
const raceEnabled = true
