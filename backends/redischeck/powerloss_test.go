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
// measurement is backends/redischeck/results/power-loss.md.
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

// TestPowerLossWindow measures, for each appendfsync policy, which
// acknowledged writes a power loss takes when clients write unique keys
// for 3 s before it: always none, everysec those of the last second or
// so, no every one. It fails if always loses any, or everysec or no none,
// or everysec loses more than its documented 2 s.
func TestPowerLossWindow(t *testing.T) {
	testlong.Skip(t) // some 15 s
	needServer(t)
	if err := lazyfs.Available(); err != nil {
		lazyfs.MountT(t, t.TempDir(), t.TempDir()) // skips, or fails under CI
	}
	for _, policy := range []string{"always", "everysec", "no"} {
		w, err := MeasureWindow(t.TempDir(), policy, 4, 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(w)
		switch {
		case policy == "always" && w.Lost > 0:
			t.Errorf("appendfsync always lost %d acknowledged writes", w.Lost)
		case policy != "always" && w.Lost == 0:
			t.Errorf("appendfsync %s lost nothing: the power loss did not reach past the fsync", policy)
		case policy == "everysec" && w.Oldest > 2*time.Second+500*time.Millisecond:
			t.Errorf("appendfsync everysec lost writes acknowledged %v before the power loss (the policy allows some 2 s)", w.Oldest)
		}
	}
}
