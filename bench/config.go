package bench

import (
	"fmt"
	"regexp"
	"time"
)

// Config is the whole input of `tollgate bench`. Start from Defaults. Each
// field but the servers' addresses is one flag of the command.
type Config struct {
	// Full runs the complete matrix (goroutines 1, 2, 4, 8, 16, 64; keys
	// 1, 16, 10000; every workload), not the quick set.
	Full bool
	// Out is the directory for raw.txt, RESULTS.md and the plots; empty,
	// Run makes a new one under the system's temporary directory (and
	// prints it), so that no run overwrites results kept elsewhere, such as
	// the committed bench/results.
	Out string
	// Benchtime is the target time per case per round (0: 40 ms, 100 ms
	// with Full; Resolve fills it in).
	Benchtime time.Duration
	// Rounds are the rounds of every case, interleaved with the other
	// designs at the same goroutine count; each case keeps its median
	// round, and every ratio is tested over all of them (0: DefaultRounds;
	// Resolve fills it in).
	Rounds int
	// Run keeps only the cases whose name matches this regular
	// expression.
	Run string
	// MemKeys is the number of keys of the memory-per-idle-key
	// measurement (0 skips it).
	MemKeys int
	// Redis also measures the Redis-backed take against go-redis/redis_rate
	// v10 and PING, on the server at RedisAddr.
	Redis bool
	// RedisAddr is the redis-server of Redis; Run needs one then (the
	// command starts a throwaway one).
	RedisAddr string
	// RedisCluster also measures how takes scale with a Redis Cluster's
	// primaries: three tables on the cluster at RedisClusterOne (1 primary)
	// and at RedisClusterThree (3 primaries), RedisClusterSuite.
	RedisCluster bool
	// RedisClusterOne and RedisClusterThree are the node addresses of the
	// two clusters of RedisCluster; Run needs them then (the command
	// starts throwaway ones).
	RedisClusterOne, RedisClusterThree []string
	// Etcd also measures the etcd-backed take (EtcdSuite) on the cluster at
	// EtcdEndpoints against the Redis-backed take on the redis-server at
	// RedisAddr; Run needs both then (the command starts throwaway ones).
	Etcd          bool
	EtcdEndpoints []string
}

// DefaultRounds is the rounds of a run that does not choose: 6, so that a
// difference can be significant (MinRoundsForSignificance) even with a few
// rounds out of order — at 3, as benchstat says of such a run, nothing
// can (p ≥ 0.100).
const DefaultRounds = 6

// Defaults is the configuration of a bare `tollgate bench`.
func Defaults() Config {
	return Config{MemKeys: 1_000_000}
}

// Resolve checks c and returns it completed: the benchmark time and the
// rounds of a zero value filled in. An error names the flag and the rule
// it breaks, and comes with c unchanged.
func (c Config) Resolve() (Config, error) {
	switch {
	case c.Benchtime < 0:
		return c, fmt.Errorf("tollgate bench: -benchtime = %v: must not be negative", c.Benchtime)
	case c.Rounds < 0:
		return c, fmt.Errorf("tollgate bench: -rounds = %d: must not be negative", c.Rounds)
	case c.MemKeys < 0:
		return c, fmt.Errorf("tollgate bench: -memkeys = %d: must not be negative", c.MemKeys)
	}
	if _, err := regexp.Compile(c.Run); err != nil {
		return c, fmt.Errorf("tollgate bench: -run = %q: not a regular expression: %v", c.Run, err)
	}
	if c.Benchtime == 0 {
		c.Benchtime = 40 * time.Millisecond
		if c.Full {
			c.Benchtime = 100 * time.Millisecond
		}
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	return c, nil
}
