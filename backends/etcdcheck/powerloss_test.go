package etcdcheck

import (
	"testing"

	"github.com/tollgate/tollgate/backends/etcdserver"
)

// TestPowerLoss: when the leader's machine, or every member's at once,
// loses power (what etcd had not fsynced dropped), no acknowledged write
// is lost and both histories are linearizable; on disks that ignore
// fsync (the negative control) acknowledged writes are lost. The
// committed measurement is backends/redischeck/results/power-loss.md.
func TestPowerLoss(t *testing.T) {
	if !*long {
		t.Skip("the fault workloads run with -long (three clusters of three members, some 60 s)")
	}
	// Skips, or fails under CI, without etcd or FUSE.
	etcdserver.StartClusterT(t, 1, etcdserver.OnLazyFS()).Stop()
	for _, s := range append(powerLossScenarios(), lyingDisks) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			rows, err := Run(s, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				logRow(t, r)
				if !r.Pass() {
					t.Errorf("%s %s: %s, invariant %s, lost %d of %d: %s", r.Scenario, r.Primitive, r.Result, r.Invariant, r.Lost, r.Acked, r.Detail)
				}
			}
		})
	}
}
