package bench

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/redisserver"
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
