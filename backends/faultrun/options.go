package faultrun

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
)

// Options configure a wing's Run.
type Options struct {
	Timeout      time.Duration // each call's budget (default: the wing's)
	CheckTimeout time.Duration // porcupine's budget per history (default 20 s)
	Seed         uint64
	// Fault is a mutant of the wing's tables to run instead of the real
	// ones (fault.None: the real ones).
	Fault  fault.Fault
	Dir    string // where failing histories are written (default: a directory of the wing's under os.TempDir)
	Parent string // where the servers' directories go
}

// Defaults fills what o leaves zero: the call budget with timeout, the
// directory of failing histories with dir under os.TempDir.
func (o *Options) Defaults(timeout time.Duration, dir string) {
	if o.Timeout == 0 {
		o.Timeout = timeout
	}
	if o.CheckTimeout == 0 {
		o.CheckTimeout = 20 * time.Second
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(os.TempDir(), dir)
	}
}

// Rows runs one for each primitive named ("tokenbucket", "credits"; both
// when empty) that runs reports true for, and returns a row each; an
// error stops it, named by the wing and the scenario. A row whose fault
// found no write in flight and nothing else wrong (OnlyMissedWrites) is
// run again, up to StrikeTries times in all, and its detail says so.
func Rows(wing, scenario string, prims []string, runs func(prim string) bool, one func(prim string) (Row, error)) ([]Row, error) {
	if len(prims) == 0 {
		prims = []string{linearizability.PrimitiveTokenBucket, linearizability.PrimitiveCredits}
	}
	var rows []Row
	for _, p := range prims {
		if !runs(p) {
			continue
		}
		r, err := one(p)
		missed := 0
		for err == nil && OnlyMissedWrites(r) && missed+1 < StrikeTries {
			missed++
			r, err = one(p)
		}
		if err != nil {
			return rows, fmt.Errorf("%s: %s, %s: %w", wing, scenario, p, err)
		}
		if missed > 0 {
			r.Detail += fmt.Sprintf("; injected again: %d try(s) before found no write in flight, nothing else wrong", missed)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// StrikeTries is how many times a fault row or a soak window is run in all
// while its fault finds no write in flight and nothing else is wrong with
// it. Jepsen's rule: a fault that hit nothing is neither a pass nor a
// failure. The write a strike waits for can itself be one the fault keeps
// from being sent (the remote adapter's ErrNotRun), which the history then
// does not hold (etcd's power-loss-all, credits, seed 3: 1 row in 160).
const StrikeTries = 3

// OnlyMissedWrites reports whether r fails only because its fault found
// no write in flight: with one there, it would pass.
func OnlyMissedWrites(r Row) bool {
	if r.Pass() || r.InFlight != 0 {
		return false
	}
	r.InFlight = 1
	return r.Pass()
}
