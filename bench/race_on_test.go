//go:build race

package bench

// raceEnabled: the race detector slows building a table of 1,000,000 keys
// about thirtyfold, and the heap figures it would check do not depend on
// it.
const raceEnabled = true
