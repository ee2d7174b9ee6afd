//go:build tollgate_stats

package bench

// countsRetries reports whether impl/ counts lost compare-and-swap races in
// this build (-tags tollgate_stats).
const countsRetries = true
