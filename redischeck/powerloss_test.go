package redischeck

import (
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/lazyfs"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestPowerLossLadder: a power loss under the data directory holds each
// appendfsync policy to its promise on both tables: always loses no
// acknowledged write (and its history is linearizable), everysec and no
// lose some (the power loss reached past the fsync). The committed
// measurement is redischeck/results/power-loss.md.
func TestPowerLossLadder(t *testing.T) {
	testlong.Skip(t) // three servers, some 5 s; CI runs it, and scripts/power-loss.sh runs a row
	needServer(t)
	if err := lazyfs.Available(); err != nil {
		lazyfs.MountT(t, t.TempDir(), t.TempDir()) // skips, or fails under CI, saying how to install FUSE
	}
	for _, s := range powerLossScenarios() {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			rows, err := Run(s, nil, Options{Seed: 1, Parent: t.TempDir(), Dir: t.TempDir(), CheckTimeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				logRow(t, r)
				if !r.Pass() {
					t.Errorf("%s %s: %s, lost %d of %d acknowledged: %s", r.Scenario, r.Primitive, r.Result, r.Lost, r.Acked, r.Detail)
				}
			}
		})
	}
}
