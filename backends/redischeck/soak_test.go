package redischeck

import (
	"reflect"
	"testing"
	"time"

	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/linearizability"
)

// TestSoakPlanReproducible: one seed draws one plan, another seed another;
// over 300 windows the plan draws every fault, pairs of faults in both
// orders, and never two faults on one thing.
func TestSoakPlanReproducible(t *testing.T) {
	for _, cluster := range []bool{false, true} {
		atoms := SoakAtoms(cluster)
		a := faultrun.Plan(7, 300, faultrun.Prims, atoms)
		b := faultrun.Plan(7, 300, faultrun.Prims, atoms)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("cluster %v: seed 7 drew two plans", cluster)
		}
		c := faultrun.Plan(8, 300, faultrun.Prims, atoms)
		same := 0
		for i := range a {
			if reflect.DeepEqual(a[i], c[i]) {
				same++
			}
		}
		if same > 0 {
			t.Errorf("cluster %v: seeds 7 and 8 drew %d equal windows of 300", cluster, same)
		}
		on := map[string]string{}
		for _, at := range atoms {
			on[at.Name] = at.On
		}
		drawn, pairs := map[string]bool{}, map[[2]string]bool{}
		for _, w := range a {
			if _, err := SoakScenario(w, cluster); err != nil {
				t.Fatal(err)
			}
			for _, s := range w.Steps {
				drawn[s.Fault] = true
			}
			if len(w.Steps) == 2 {
				x, y := w.Steps[0], w.Steps[1]
				if on[x.Fault] == on[y.Fault] {
					t.Errorf("%s: two faults on %s", w, on[x.Fault])
				}
				if y.After > x.Hold {
					t.Errorf("%s: the second strikes after the first has ended", w)
				}
				pairs[[2]string{x.Fault, y.Fault}] = true
			}
		}
		for _, at := range atoms {
			if !drawn[at.Name] {
				t.Errorf("cluster %v: %s never drawn in 300 windows", cluster, at.Name)
			}
		}
		if !cluster && !(pairs[[2]string{"pause", "partition"}] && pairs[[2]string{"partition", "pause"}]) {
			t.Errorf("a partition during a pause, or a pause during a partition, never drawn: %v", pairs)
		}
		t.Logf("cluster %v: %d pairs drawn; %s", cluster, len(pairs), a[0])
	}
}

// TestSoakWindows: overlapping faults on one server, both tables: a
// partition during a pause, a crash during a partition, CLIENT PAUSE
// during a paused replica: each window holds the whole promise, and both
// its faults struck. By default the crash during a partition only; the
// other two with -long.
func TestSoakWindows(t *testing.T) {
	t.Parallel()
	needServer(t)
	windows := []faultrun.Window{
		faultrun.Of(linearizability.PrimitiveCredits, 700*time.Millisecond, 200*time.Millisecond, "partition", "crash"),
	}
	if testlong.Enabled() {
		windows = append(windows,
			faultrun.Of(linearizability.PrimitiveTokenBucket, 700*time.Millisecond, 200*time.Millisecond, "pause", "partition"),
			faultrun.Of(linearizability.PrimitiveTokenBucket, 700*time.Millisecond, 200*time.Millisecond, "replica-pause", "client-pause"))
	}
	for _, w := range windows {
		r, err := RunWindow(w, false, Options{Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		logRow(t, r)
		if !r.Pass() {
			t.Errorf("%s: %s", w, r.Failure())
		}
	}
}

// TestSoakCatchesALoss: the same soak window on a server that keeps no
// AOF (a broken server: a crash takes every write) fails, by the
// durability check, where the real one passes.
func TestSoakCatchesALoss(t *testing.T) {
	t.Parallel()
	needServer(t)
	w := faultrun.Of(linearizability.PrimitiveTokenBucket, 700*time.Millisecond, 200*time.Millisecond, "crash", "partition")
	r, err := runWindow(w, false, Options{Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 5 * time.Second}, func(s *Scenario) { s.AOF = false })
	if err != nil {
		t.Fatal(err)
	}
	logRow(t, r)
	if r.Pass() || r.Lost == 0 {
		t.Errorf("a crash without an AOF passed the soak: %s", r.Detail)
	}
}

// TestClockScenarios: the server's clock stepped an hour forward and a
// minute back under load: the step hits (TIME moves by it), the credit
// table's probe answers as spec/redis.md §5a promises, and both tables'
// histories are linearizable with nothing lost or applied twice; the same
// row whose step never happens fails. Four windows and a shim compiled
// with cc, 12 s: with -long (CI's server lane also runs clock-back through
// the CLI).
func TestClockScenarios(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	needServer(t)
	for _, s := range Scenarios() {
		if s.Clock == 0 {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			rows, err := Run(s, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				logRow(t, r)
				if !r.Pass() {
					t.Errorf("%s %s: %s", r.Scenario, r.Primitive, r.Failure())
				}
			}
			s.noStep = true
			rows, err = Run(s, []string{linearizability.PrimitiveTokenBucket}, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			logRow(t, rows[0])
			if rows[0].Pass() {
				t.Errorf("%s without its step passed: %s", s.Name, rows[0].Detail)
			}
		})
	}
}

// TestClusterPartitionScenarios: on a Redis Cluster behind proxies, the
// table's primary cut from every other node for a quarter of the node timeout
// loses nothing; cut until its replica is promoted, it loses only writes
// acknowledged within ClusterPartitionBound of the cut; and the same row
// held to a bound of 200 ms fails (the cut primary went on acknowledging
// past it). About two and a half minutes: with -long.
func TestClusterPartitionScenarios(t *testing.T) {
	if !*long {
		t.Skip("with -long: the cluster-partition rows and their negative control (about 3 min); CI runs cluster-* rows through tollgate check")
	}
	needServer(t)
	for _, s := range Scenarios() {
		if !s.ClusterProxied {
			continue
		}
		rows, err := Run(s, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			logRow(t, r)
			if !r.Pass() {
				t.Errorf("%s %s: %s", r.Scenario, r.Primitive, r.Failure())
			}
		}
		if s.Name != "cluster-partition" {
			continue
		}
		s.bound = 200 * time.Millisecond
		rows, err = Run(s, []string{linearizability.PrimitiveTokenBucket}, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		logRow(t, rows[0])
		if rows[0].Pass() {
			t.Errorf("cluster-partition held to 200 ms passed: %s", rows[0].Detail)
		} else {
			t.Logf("cluster-partition held to 200 ms fails, as it must: %s", rows[0].Failure())
		}
	}
}
