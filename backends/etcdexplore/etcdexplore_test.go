package etcdexplore_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdexplore"
	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/testlong"
)

// runs numbers the explorations, so that a test run again (-count) on the
// shared cluster starts from tables of its own.
var runs atomic.Int64

// remote is the explorer's etcd backend on a client of its own, of a
// one-member cluster: a request's atomicity is the same on one member as
// on three, and each costs a third of the processes.
func remote(t *testing.T, f fault.Fault) *interleave.Remote {
	t.Helper()
	cl := etcdserver.StartClusterT(t, 1)
	c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return etcdexplore.Remote(c, f, fmt.Sprintf("x%d", runs.Add(1)))
}

// explorable is the catalogue's token-bucket scenarios (their pinned hashes
// mean nothing on etcd, which has no trie: each is its operations alone).
func explorable(t *testing.T) []interleave.Scenario {
	var out []interleave.Scenario
	for _, s := range interleave.Catalogue() {
		if s.Primitive == interleave.TokenBucket {
			out = append(out, s)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d token-bucket scenarios to explore on etcd", len(out))
	}
	return out
}

// TestCatalogue explores the catalogue's token-bucket scenarios on etcd,
// every schedule of its requests within one preemption (the long run: the
// default bound, 2): the real table passes every one (T1–T12 through
// porcupine against model/). One preemption is what the reclaim that missed
// a bucket made since its read needed (etb-reclaim-misses-new-bucket).
// By default every third scenario; all of them with -long.
func TestCatalogue(t *testing.T) {
	bound := 1
	if testlong.Enabled() && !raceEnabled {
		bound = interleave.DefaultBound
	}
	r := remote(t, fault.None)
	for i, s := range explorable(t) {
		if !testlong.Enabled() && i%3 != 0 {
			continue
		}
		res := interleave.Explore(s, interleave.Options{Remote: r, Bound: bound, Dir: t.TempDir()})
		if res.Err != nil {
			t.Fatalf("%s: %v", s.Name, res.Err)
		}
		if res.Failure != nil {
			t.Errorf("%s\n%s", res.Summary(), res.Failure.Report())
			continue
		}
		t.Logf("%s: %s", s.Name, res.Summary())
	}
}

// TestCatalogueCredits explores the catalogue's credit-table scenarios on
// etcd (impl/etcd/credits), every schedule of their requests within one
// preemption, with the table's snapshot observed after every step that
// may have written: the real table passes every one (C1–C17 through
// porcupine against model/). A long test: 975 schedules, 40 s; under the
// race detector, the first four scenarios only (120 schedules).
func TestCatalogueCredits(t *testing.T) {
	testlong.Skip(t)
	bound := 1
	r := remote(t, fault.None)
	n := 0
	for _, s := range interleave.Catalogue() {
		if s.Primitive != interleave.Credits || raceEnabled && n == 4 {
			continue
		}
		n++
		res := interleave.Explore(s, interleave.Options{Remote: r, Bound: bound, Dir: t.TempDir()})
		if res.Err != nil {
			t.Fatalf("%s: %v", s.Name, res.Err)
		}
		if res.Failure != nil {
			t.Errorf("%s\n%s", res.Summary(), res.Failure.Report())
			continue
		}
		t.Logf("%s: %s", s.Name, res.Summary())
	}
}
