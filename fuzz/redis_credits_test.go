package fuzz

import (
	"fmt"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/backends/redissut"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// redisCrTables starts a server and returns a maker of fresh credit tables
// of f's package on it, each under a name of its own.
func redisCrTables(t *testing.T, f fault.Fault) func() RemoteCr {
	t.Helper()
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	n := 0
	return func() RemoteCr {
		n++
		s, err := redissut.NewCredits(f, c, fmt.Sprintf("diff/%d", n))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}

// TestRapidRedisCredits runs the credit table's rapid machine against the
// Redis table: every answer the model's, and the properties of every step
// (C1, C3, C6, C7, C8, C11, C13, C14); 25 cases by default, 100 in the long
// run (checkRedis).
func TestRapidRedisCredits(t *testing.T) {
	checkRedis(t, RedisCreditsProp(redisCrTables(t, fault.None), Options{}, nil))
}

// TestRedisCreditsMutantsDiverge: every mutant of impl/redis/credits dies
// in a seeded random sequence of the machine, and the same sequences pass
// against the real table.
func TestRedisCreditsMutantsDiverge(t *testing.T) {
	build.Need(t)
	real := redisCrTables(t, fault.None)
	for i := range 20 {
		if fail := RunRedisCreditsBytes(RandomInput(layerSeed, i), real(), Options{}); fail != nil {
			t.Fatalf("input %d against the real table: %v", i, fail)
		}
	}
	for _, f := range fault.AllRedis() {
		if !f.Credits() {
			continue
		}
		t.Run(f.String(), func(t *testing.T) {
			tables := redisCrTables(t, f)
			for i := range 200 {
				if fail := RunRedisCreditsBytes(RandomInput(layerSeed, i), tables(), Options{}); fail != nil {
					t.Logf("input %d killed it: %s at step %d: %s", i, fail.Property, fail.Step, fail.Detail)
					return
				}
			}
			t.Fatalf("%v survived 200 random sequences", f)
		})
	}
}
