//go:build tollgate_stats

package credits

import "sync/atomic"

// stats counts lost compare-and-swap races (build tag tollgate_stats).
type stats struct{ retries atomic.Uint64 }

func (s *stats) lostRace() { s.retries.Add(1) }

// CASRetries reports the commit attempts this table lost to another
// goroutine. It is counted only in builds with -tags tollgate_stats and is
// always 0 otherwise.
func (s *stats) CASRetries() uint64 { return s.retries.Load() }
