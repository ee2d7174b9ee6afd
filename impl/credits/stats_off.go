//go:build !tollgate_stats

package credits

// stats counts lost compare-and-swap races only in builds tagged
// tollgate_stats; in normal builds it is empty and lostRace compiles away.
type stats struct{}

func (*stats) lostRace() {}

// CASRetries reports the commit attempts this table lost to another
// goroutine. It is counted only in builds with -tags tollgate_stats and is
// always 0 otherwise.
func (*stats) CASRetries() uint64 { return 0 }
