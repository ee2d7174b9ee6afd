package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/internal/testlong"
)

// BenchmarkRedisTake measures a take against one local redis-server, for
// each design at each goroutine count, all on the same server in the same
// run:
//
//	go test -run '^$' -bench RedisTake ./bench
//
// ns/op is wall time per operation over all goroutines (throughput is its
// inverse); p50-ns and p99-ns are the latencies of single operations.
// cpu-ns/op counts this process only, not the server.
func BenchmarkRedisTake(b *testing.B) {
	srv := redisserver.StartT(b)
	for _, c := range RedisSuite(srv.Addr) {
		b.Run(strings.TrimPrefix(c.Name, RedisGroup+"/"), underTest(c.Run))
	}
}

// TestRedisDesignsAdmit runs each Redis design briefly: every operation
// succeeds, so the benchmark measures what it says.
func TestRedisDesignsAdmit(t *testing.T) {
	srv := redisserver.StartT(t)
	for _, d := range RedisDesigns() {
		newOp, closeFn, err := d.Open(srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		ws := runWorkers(4, 200, newOp, nil)
		closeFn()
		if st := summarize(ws); st.admitted != 200 {
			t.Errorf("%s: %d of 200 admitted", d.Name, st.admitted)
		}
	}
}

// BenchmarkRedisClusterScaling measures takes on three tables with 1 and 3
// primaries (two clusters, each primary with a replica), in the same run:
//
//	go test -run '^$' -bench RedisClusterScaling ./bench
func BenchmarkRedisClusterScaling(b *testing.B) {
	one := redisserver.StartClusterT(b, 1, time.Second)
	three := redisserver.StartClusterT(b, 3, time.Second)
	for _, c := range RedisClusterSuite(one.Addrs(), three.Addrs()) {
		b.Run(strings.TrimPrefix(c.Name, RedisClusterGroup+"/"), underTest(c.Run))
	}
}

// TestSpreadTableNames: the scaling cases' three tables land on three
// primaries of a three-primary cluster, so the ratio measures the spread.
func TestSpreadTableNames(t *testing.T) {
	testlong.Skip(t)
	c := redisserver.StartClusterT(t, 3, time.Second)
	names, err := SpreadTableNames(context.Background(), c.Addrs(), 3)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]bool{}
	for _, n := range names {
		slot, err := c.Primaries[0].KeySlot("{" + n + "}")
		if err != nil {
			t.Fatal(err)
		}
		addr, _, err := c.Primaries[0].SlotOwner(slot)
		if err != nil {
			t.Fatal(err)
		}
		owners[addr] = true
	}
	if len(owners) != 3 {
		t.Errorf("tables %v are served by %d primaries, want 3", names, len(owners))
	}
	if _, err := SpreadTableNames(context.Background(), c.Addrs(), 4); err == nil {
		t.Error("SpreadTableNames found 4 primaries in a cluster of 3")
	}
}

// TestRedisServerTimePerRound: every Redis case reports the server's own
// time per call of its command over the case (server-ns/op), so each
// round's server time stands beside its end-to-end time, and the run
// collects it round by round.
func TestRedisServerTimePerRound(t *testing.T) {
	srv := redisserver.StartT(t)
	var cases []Case
	for _, c := range RedisSuite(srv.Addr) {
		if c.G == 1 {
			cases = append(cases, c)
		}
	}
	rs, failed := Runner{Rounds: 2, Benchtime: 20 * time.Millisecond}.Run(cases)
	if len(failed) > 0 || len(rs) != len(RedisDesigns()) {
		t.Fatalf("%d results, failed: %v", len(rs), failed)
	}
	for _, r := range rs {
		if len(r.ServerRounds) != 2 {
			t.Fatalf("%s: server time of %d rounds, want 2", r.Name, len(r.ServerRounds))
		}
		for _, ns := range r.ServerRounds {
			if !(ns > 0 && ns < 1e7) {
				t.Errorf("%s: server-ns/op %v", r.Name, ns)
			}
		}
	}
}
