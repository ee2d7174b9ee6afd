package redischeck

import (
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/linearizability"
)

var long = flag.Bool("long", false, "run the cluster fault scenarios (TestClusterScenarios, about 40 s)")

func needServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		redisserver.StartT(t) // skips, or fails under CI
	}
}

func logRow(t *testing.T, r Row) {
	t.Logf("%-14s %-11s ops %4d unknown %3d (settled %3d) %-8s %s (%v)", r.Scenario, r.Primitive, r.Ops, r.UnknownOps, r.SettledOps, r.Result, r.Detail, r.Elapsed.Round(1e6))
}

// TestScenarios: the faults the backend promises to survive (a pause, a
// crash restarted from the AOF, CLIENT PAUSE WRITE) hold their promise on
// both tables: linearizable, and no acknowledged write lost or applied
// twice. (tollgate check --backend redis runs every scenario.) The default
// run checks the baseline and the crash (about a second and a half of CPU
// each); the long run (testlong) adds the pause and CLIENT PAUSE WRITE,
// whose unknown outcomes TestRetryOnTimeoutKilledByPause also exercises by
// default. None of them runs a mutant.
func TestScenarios(t *testing.T) {
	t.Parallel() // each on servers of its own; they mostly wait out faults
	needServer(t)
	for _, s := range Scenarios() {
		switch s.Name {
		case "none", "crash":
		case "pause", "client-pause":
			if !testlong.Enabled() {
				continue
			}
		default:
			continue
		}
		// Each on servers of its own, at once: they spend most of their
		// time waiting out their faults. Unknown outcomes are settled
		// (settle.go), so a credit history under client-pause checks in
		// milliseconds, as the others do.
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			rows, err := Run(s, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				logRow(t, r)
				if !r.Pass() {
					t.Errorf("%s %s: %s, %s", r.Scenario, r.Primitive, r.Result, r.Detail)
				}
			}
		})
	}
}

// TestFailoverLosesWhatWaitKeeps: a replica promoted while the primary
// still takes writes loses takes the primary acknowledged (the measured
// limit), and with WAIT 1 after every call none that was acknowledged is
// lost and the history is linearizable (the token bucket, whose direct
// check counts the tokens; spec/redis-faults.md §4).
func TestFailoverLosesWhatWaitKeeps(t *testing.T) {
	testlong.Skip(t)
	t.Parallel() // each on servers of its own; they mostly wait out faults
	needServer(t)
	for _, s := range Scenarios() {
		if s.Name != "failover" && s.Name != "failover-wait" {
			continue
		}
		rows, err := Run(s, []string{linearizability.PrimitiveTokenBucket}, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := rows[0]
		logRow(t, r)
		switch {
		case s.Wait == 0 && r.Lost == 0:
			t.Errorf("failover without WAIT lost nothing (%s): the window did not land", r.Detail)
		case s.Wait > 0 && !r.Pass():
			t.Errorf("failover with WAIT 1: %s, %s", r.Result, r.Detail)
		}
	}
}

// TestCrashWithoutAOFLosesWrites: the durability check fails a server that
// forgets acknowledged writes in a crash (the negative control of crash).
func TestCrashWithoutAOFLosesWrites(t *testing.T) {
	testlong.Skip(t)
	t.Parallel() // each on servers of its own; they mostly wait out faults
	needServer(t)
	// porcupine's verdict does not matter here (proving a credit history
	// with lost writes Illegal can take it a minute): the direct check must
	// find the losses.
	rows, err := Run(crashNoAOF, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		logRow(t, r)
		if r.Lost == 0 || r.Pass() {
			t.Errorf("%s: a crash without persistence passed: %s, %s", r.Primitive, r.Result, r.Detail)
		}
	}
}

// TestRetryOnTimeoutKilledByPause: mutant rtb-retry-on-timeout (a client
// that keeps go-redis's retries) sends a timed-out take again while the
// server is stopped; every copy runs after SIGCONT, so the pause workload
// finds tokens that no take accounts for, and porcupine (T11) a history
// that does not linearize. The other Redis mutants are killed by conform
// (see .ci/run).
func TestRetryOnTimeoutKilledByPause(t *testing.T) {
	build.Need(t)
	t.Parallel() // each on servers of its own; they mostly wait out faults
	needServer(t)
	var pause Scenario
	for _, s := range Scenarios() {
		if s.Name == "pause" {
			pause = s
		}
	}
	// The copies must be sent before the server continues; on a loaded
	// machine one run in about fifteen sent none. Three seeds, each a run
	// of its own.
	for seed := uint64(1); seed <= 3; seed++ {
		rows, err := Run(pause, nil, Options{Seed: seed, Parent: t.TempDir(), Dir: t.TempDir(), Fault: fault.Named("rtb-retry-on-timeout"), CheckTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("%d rows, want the token bucket's only", len(rows))
		}
		logRow(t, rows[0])
		if !rows[0].Pass() && rows[0].Extra > 0 {
			return
		}
	}
	t.Fatal("rtb-retry-on-timeout survived the pause in 3 runs")
}

// TestClusterScenarios: both tables on a Redis Cluster through a reshard
// under load and a coordinated failover (CLUSTER FAILOVER): linearizable,
// no acknowledged write lost or applied twice, and the table answering
// again once the fault is over; and through a primary killed or stopped
// until the cluster promotes its replica, where asynchronous replication
// may lose writes (measured), the table must answer again too.
//
// It runs with -long (about 40 s); CI runs every one through tollgate check
// --backend redis-cluster, and the fast tests hold the two bugs these
// scenarios found (TestTablesOnACluster/FollowAFailover in impl/redis/rconn,
// TestCluster/ReplicasStream in redisserver).
func TestClusterScenarios(t *testing.T) {
	if !*long {
		t.Skip("with -long: every cluster fault scenario on both tables (about 40 s); CI runs them through tollgate check --backend redis-cluster")
	}
	needServer(t)
	for _, s := range Scenarios() {
		if !s.Cluster {
			continue
		}
		rows, err := Run(s, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			logRow(t, r)
			if !r.Pass() {
				t.Errorf("%s %s: %s, %s", r.Scenario, r.Primitive, r.Result, r.Detail)
			}
		}
	}
}

// TestFaultMustStrike: a scenario whose fault never struck (the recording
// ended before it) fails its row, rather than passing as injected.
func TestFaultMustStrike(t *testing.T) {
	t.Parallel()
	needServer(t)
	never := Scenario{Name: "never", What: "waits for more calls than the recording makes",
		inject: func(e *env) error {
			if !e.Strike(2) {
				return nil
			}
			return e.primary.Pause()
		}}
	rows, err := Run(never, []string{linearizability.PrimitiveTokenBucket}, Options{Seed: 1, Parent: t.TempDir(), CheckTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	logRow(t, r)
	if r.Pass() || r.Struck || r.Failure() != "the fault never struck" {
		t.Fatalf("a fault that never struck: pass %v, %q: %s", r.Pass(), r.Failure(), r.Detail)
	}
}

// TestClusterFailsOverOnItsOwn: a failover no fault made is the machine's,
// and the row says so. Before the fault, the table's pair failed over
// (CLUSTER FAILOVER on its replica, as a starved primary's replica would
// take over): findTable takes it in and the fault strikes the new primary;
// during the recording, another pair failed over the same way: the row,
// which passed, names it. A row that failed would be an error naming it
// instead (unplanned). With -long (about 6 s).
func TestClusterFailsOverOnItsOwn(t *testing.T) {
	testlong.Skip(t)
	needServer(t)
	failover := func(r *redisserver.Server, c *redisserver.Cluster) error {
		if _, err := r.Query("CLUSTER", "FAILOVER"); err != nil {
			return err
		}
		return c.WaitPrimary(r, 10*c.NodeTimeout)
	}
	var other int
	s := Scenario{Name: "upset", What: "the table's pair failed over before the fault, another pair during it", Cluster: true,
		upset: func(e *env) error {
			slot, owner, err := e.tableSlot()
			if err != nil {
				return err
			}
			for i, p := range e.cluster.Primaries {
				if p.Addr != owner {
					continue
				}
				// Primaries[0]'s view may not have the failover yet:
				// findTable then finds the primary it names replicating.
				return failover(e.cluster.Replicas[i], e.cluster)
			}
			return fmt.Errorf("slot %d at %s, no primary", slot, owner)
		},
		inject: func(e *env) error {
			if !e.Strike(0.3) {
				return nil
			}
			other = (e.owner + 1) % len(e.cluster.Primaries)
			return failover(e.cluster.Replicas[other], e.cluster)
		}}
	rows, err := Run(s, []string{linearizability.PrimitiveTokenBucket}, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	logRow(t, r)
	if !r.Pass() {
		t.Fatalf("the row failed: %s", r.Failure())
	}
	for _, want := range []string{"before the fault the cluster failed the table's pair over on its own", fmt.Sprintf("failed over pair %d (", other)} {
		if !strings.Contains(r.Detail, want) {
			t.Errorf("the row's detail does not say %q: %s", want, r.Detail)
		}
	}
}
