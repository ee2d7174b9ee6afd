package fuzz

import (
	"flag"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/backends/redissut"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
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
// properties of every step (checkRedis: 25 cases by default, rapid's 100
// in the long run, -rapid.checks when given). The hostile machine's
// numbers run in TestRedisRandomSequences.
func TestRapidRedisTokenBucket(t *testing.T) {
	checkRedis(t, RedisTokenBucketProp(redisTable(t, fault.None), Options{}, nil))
}

// rapidChecksGiven is whether -rapid.checks was on the command line, read
// before checkRedis sets it.
var rapidChecksGiven = sync.OnceValue(func() bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	return given
})

// checkRedis runs rapid's check of prop, a machine whose every step is a
// round trip to a server: a case costs about 20 ms of CPU, the client's
// and the server's. Unless -rapid.checks was given, the default run checks
// 25 cases and the long run (testlong) rapid's default 100. These machines
// run the real tables: the Redis mutants die in TestRedisMutantsDiverge and
// TestRedisCreditsMutantsDiverge, whatever the count.
func checkRedis(t *testing.T, prop func(*rapid.T)) {
	t.Helper()
	if !rapidChecksGiven() && !testlong.Enabled() {
		f := flag.Lookup("rapid.checks")
		old := f.Value.String()
		if err := flag.Set("rapid.checks", "25"); err != nil {
			t.Fatal(err)
		}
		defer flag.Set("rapid.checks", old)
	}
	rapid.Check(t, prop)
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
