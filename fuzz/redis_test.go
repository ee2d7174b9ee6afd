package fuzz

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/backends/redissut"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// redisTable starts a server and returns an adapter over a table of f's
// package on it.
func redisTable(t *testing.T, f fault.Fault) *redissut.TokenBucket {
	t.Helper()
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redissut.NewTokenBucket(f, c, "diff")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestRapidRedisTokenBucket runs the token bucket's rapid machines against
// the Redis-backed table: every answer bit for bit the model's, and the
// properties of every step (rapid's -rapid.checks cases; the default 100
// take about two seconds). The hostile machine's numbers run in
// TestRedisRandomSequences.
func TestRapidRedisTokenBucket(t *testing.T) {
	rapid.Check(t, RedisTokenBucketProp(redisTable(t, fault.None), Options{}, nil))
}

// TestRedisMutantsDiverge: the mutants one client can show die in a seeded
// random sequence against the server: rtb-tostring's rounded floats (T3)
// and rtb-timestamp-regress's stale clocks (T4). Each dies within a few
// inputs; the budget is slack for a busy machine.
func TestRedisMutantsDiverge(t *testing.T) {
	build.Need(t)
	for _, f := range []fault.Fault{fault.Named("rtb-tostring"), fault.Named("rtb-timestamp-regress")} {
		t.Run(f.String(), func(t *testing.T) {
			s := redisTable(t, f)
			start := time.Now()
			for i := 0; time.Since(start) < killBudget; i++ {
				run := RunRedisTokenBucketBytes
				if i%2 == 1 {
					run = RunRedisHostileBytes
				}
				if fail := run(RandomInput(layerSeed, i), s, Options{}); fail != nil {
					t.Logf("input %d killed it in %v: %s at step %d: %s", i, time.Since(start), fail.Property, fail.Step, fail.Detail)
					return
				}
			}
			t.Fatalf("%v survived %v of random sequences", f, killBudget)
		})
	}
}

// TestRedisRandomSequences: the same seeded random sequences pass against
// the real table (so the kills above are the mutants', not the harness's).
func TestRedisRandomSequences(t *testing.T) {
	s := redisTable(t, fault.None)
	for i := range 40 {
		run := RunRedisTokenBucketBytes
		if i%2 == 1 {
			run = RunRedisHostileBytes
		}
		if fail := run(RandomInput(layerSeed, i), s, Options{}); fail != nil {
			t.Fatalf("input %d: %v", i, fail)
		}
	}
}
