package etcdsut_test

import (
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdexplore"
	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestExploreKillsMutants: the request-grain exploration of the etcd tables
// (backends/etcdexplore) finds each mutant of impl/etcd that breaks them
// without a fault of the network or the server's clock, in the catalogue's
// scenario named, and the real table passes that scenario. It is not
// parallel: an exploration installs the process's one scheduler.
func TestExploreKillsMutants(t *testing.T) {
	build.Need(t)
	testlong.Skip(t)
	// A cluster of one member, as backends/etcdexplore's: on three, a
	// take's first read is a follower's, whose lag would make the number of
	// requests of a run vary, and a schedule would not replay.
	cl := etcdserver.StartClusterT(t, 1)
	for _, m := range []struct{ fault, scenario string }{
		{"etb-reclaim-misses-new-bucket", "tb-reclaim-vs-new-key"},
		{"etb-take-no-compare", "tb-stale-clocks"},
		{"ecr-reserve-no-compare", "cr-last-slot"},
	} {
		s, ok := interleave.Lookup(m.scenario)
		if !ok {
			t.Fatalf("no scenario %s", m.scenario)
		}
		for _, f := range []fault.Fault{fault.None, fault.Named(m.fault)} {
			c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			r := etcdexplore.Remote(c, f, fmt.Sprintf("%s-%v-%d", t.Name(), f, time.Now().UnixNano()))
			res := interleave.Explore(s, interleave.Options{Remote: r, Fault: f, Bound: 1, Dir: t.TempDir()})
			_ = c.Close()
			switch {
			case res.Err != nil:
				t.Errorf("%s on %v: %v", s.Name, f, res.Err)
			case f == fault.None && res.Failure != nil:
				t.Errorf("the real table fails %s:\n%s", s.Name, res.Failure.Report())
			case f != fault.None && res.Failure == nil:
				t.Errorf("the mutant %v passes %s on etcd (%s)", f, s.Name, res.Summary())
			case f != fault.None:
				t.Logf("the mutant %v is killed: %s, schedule %s", f, res.Summary(), res.Failure.Schedule)
			}
		}
	}
}
