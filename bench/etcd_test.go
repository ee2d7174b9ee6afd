package bench

import (
	"runtime"
	"testing"
	"time"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestEtcdServerTimePerRound: every etcd design reports the members' own
// CPU time per operation over the case (server-ns/op), round by round,
// the bare compared Txn commits every time, and every timed refusal is a
// refusal (each run fails otherwise).
func TestEtcdServerTimePerRound(t *testing.T) {
	testlong.Skip(t)
	cl := etcdserver.StartClusterT(t, 3)
	var cases []Case
	for _, c := range EtcdSuite(cl.Endpoints(), "") {
		if c.G == 16 && c.Design != RedisTake {
			cases = append(cases, c)
		}
	}
	rs, failed := Runner{Rounds: 2, Benchtime: 200 * time.Millisecond}.Run(cases)
	if len(failed) > 0 || len(rs) != 5 {
		t.Fatalf("%d results, failed: %v", len(rs), failed)
	}
	// The members cannot use more CPU than the machine has while a round
	// runs: per operation, NumCPU times the round's ns/op, twice over for
	// the reads of their counters outside the timed part, plus 50 ms for
	// a round of very few operations. A figure not divided by the
	// operations (the whole round's CPU) is far above it. (The bound was
	// 100 ms an operation until a CI run beside the -race tests timed a
	// round of refusals at 250 ms an operation.)
	cpus := float64(runtime.NumCPU())
	for _, r := range rs {
		if len(r.ServerRounds) != 2 || len(r.Rounds) != 2 {
			t.Fatalf("%s: server time of %d rounds, client time of %d, want 2", r.Name, len(r.ServerRounds), len(r.Rounds))
		}
		for i, v := range r.ServerRounds {
			if limit := 2*cpus*r.Rounds[i] + 5e7; !(v > 0 && v <= limit) {
				t.Errorf("%s: round %d: server-ns/op %.0f: the members' CPU per operation must be above 0 and at most %.0f (2 × %v CPUs × %.0f ns/op + 50 ms)", r.Name, i, v, limit, cpus, r.Rounds[i])
			}
		}
	}
}

func TestMetricValue(t *testing.T) {
	text := "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n" +
		"# TYPE process_cpu_seconds_total counter\n" +
		"process_cpu_seconds_total_other 9\n" +
		"etcd_x{a=\"process_cpu_seconds_total\"} 3\n" +
		"process_cpu_seconds_total 12.34\n"
	if v, ok := metricValue(text, "process_cpu_seconds_total"); !ok || v != 12.34 {
		t.Errorf("metricValue = %v, %v; want 12.34, true", v, ok)
	}
	if _, ok := metricValue("process_cpu_seconds_total x\n", "process_cpu_seconds_total"); ok {
		t.Error("metricValue accepted a value that is not a number")
	}
	if _, ok := metricValue(text, "absent"); ok {
		t.Error("metricValue found a metric the text lacks")
	}
}
