package etcdcheck

import (
	"flag"
	"os"
	"testing"

	"github.com/tollgate/tollgate/backends/etcdserver"
)

var long = flag.Bool("long", false, "run the fault workloads (each starts a cluster of its own)")

func logRow(t *testing.T, r Row) {
	t.Helper()
	t.Logf("%-16s %-11s ops %4d unknown %3d %-8s %s (%v)", r.Scenario, r.Primitive, r.Ops, r.UnknownOps, r.Result, r.Detail, r.Elapsed.Round(1e6))
}

// TestScenarios: under every fault, on a cluster of three, both tables'
// histories are linearizable, no acknowledged write is lost or applied
// twice, and the table answers again after the fault. It runs with -long
// only: six clusters, about a minute and a half of calls; CI runs two of
// the faults through tollgate check, and the committed table is
// backends/etcdcheck/results (bash scripts/etcd-faults.sh).
func TestScenarios(t *testing.T) {
	if !*long {
		t.Skip("the fault workloads run with -long (spec/etcd.md §6)")
	}
	if _, err := os.Stat("/usr/bin/etcd"); err != nil {
		etcdserver.StartClusterT(t, 1) // skips, or fails under CI, saying how to install etcd
	}
	for _, s := range Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			rows, err := Run(s, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				logRow(t, r)
				if !r.Pass() {
					t.Errorf("%s %s: %s, invariant %s; %s (history %s)", r.Scenario, r.Primitive, r.Result, r.Invariant, r.Detail, r.Report.JSONPath)
				}
			}
		})
	}
}
