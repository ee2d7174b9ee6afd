package etcdcheck

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/linearizability"
)

// TestSoakPlanReproducible: one seed draws one plan, another seed
// another, and every window's faults are ones the wing knows.
func TestSoakPlanReproducible(t *testing.T) {
	a := faultrun.Plan(3, 200, faultrun.Prims, SoakAtoms())
	if b := faultrun.Plan(3, 200, faultrun.Prims, SoakAtoms()); !reflect.DeepEqual(a, b) {
		t.Fatal("seed 3 drew two plans")
	}
	c := faultrun.Plan(4, 200, faultrun.Prims, SoakAtoms())
	pairs := 0
	for i, w := range a {
		if reflect.DeepEqual(w, c[i]) {
			t.Errorf("seeds 3 and 4 drew one window %d: %s", i, w)
		}
		if _, err := SoakScenario(w); err != nil {
			t.Fatal(err)
		}
		if len(w.Steps) == 2 {
			pairs++
			if w.Steps[0].Fault == "member-replace" || w.Steps[1].Fault == "member-replace" {
				t.Errorf("%s: a member replacement paired", w)
			}
		}
	}
	if pairs < 50 {
		t.Errorf("%d windows of 200 with two faults", pairs)
	}
}

func needEtcd(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/etcd"); err != nil {
		etcdserver.StartClusterT(t, 1) // skips, or fails under CI, saying how to install etcd
	}
}

// TestSoakWindow: the leader paused and a follower killed while it is
// (no majority while both hold): linearizable, nothing lost, the table
// answers again. A three-member cluster and some 7 s of CPU: with -long,
// beside the fault workloads (TestScenarios).
func TestSoakWindow(t *testing.T) {
	testlong.Skip(t)
	needEtcd(t)
	t.Parallel()
	passes(t, faultrun.Of(linearizability.PrimitiveTokenBucket, 1500*time.Millisecond, 300*time.Millisecond, "leader-pause", "follower-kill"))
}

// passes runs window w on the real tables and fails t unless its row
// passes. A row porcupine could not decide within its budget (Unknown: a
// loaded machine under -race, where more calls time out into unknown
// outcomes, each of which multiplies the search) is no pass and no
// failure: the window runs again on a new history, up to
// faultrun.StrikeTries times in all, as a fault that hit nothing does
// (spec/redis-faults.md §2), and fails if none is decided.
func passes(t *testing.T, w faultrun.Window) {
	t.Helper()
	for try := 1; ; try++ {
		r, err := RunWindow(w, Options{Parent: t.TempDir(), Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		logRow(t, r)
		if r.Inconclusive() && try < faultrun.StrikeTries {
			t.Logf("try %d of %d: porcupine did not decide the history (%d calls of unknown outcome): the window runs again", try, faultrun.StrikeTries, r.UnknownOps)
			continue
		}
		if !r.Pass() {
			t.Errorf("%s: %s (try %d of %d)", w, r.Failure(), try, faultrun.StrikeTries)
		}
		return
	}
}

// TestSoakAnswerLoss: the answers of the writes in flight dropped and the
// client's connections reset, for each primitive on the real tables:
// every call whose answer was lost is reported unknown, none is applied
// twice, and the history is linearizable. With -long.
func TestSoakAnswerLoss(t *testing.T) {
	testlong.Skip(t)
	needEtcd(t)
	for _, prim := range faultrun.Prims {
		t.Run(prim, func(t *testing.T) {
			t.Parallel()
			passes(t, faultrun.Of(prim, 150*time.Millisecond, 0, "answer-loss"))
		})
	}
}

// TestSoakCatchesAMutant: an answer-loss window on mutant
// etb-retry-on-unknown (a take whose commit's outcome is unknown is read
// and committed again) fails: the fault is checked to have dropped the
// answer of a committed write, and the mutant's second commit takes the
// cost twice. One window on a three-member cluster, with -long.
func TestSoakCatchesAMutant(t *testing.T) {
	testlong.Skip(t)
	build.Need(t)
	needEtcd(t)
	t.Parallel()
	w := faultrun.Of(linearizability.PrimitiveTokenBucket, 150*time.Millisecond, 0, "answer-loss")
	r, err := RunWindow(w, Options{Parent: t.TempDir(), Dir: t.TempDir(), Fault: fault.Named("etb-retry-on-unknown"), CheckTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logRow(t, r)
	if r.Pass() {
		t.Errorf("etb-retry-on-unknown passed %s", w)
	}
}
