// Package mutant is the registry of checking layers that the mutants command
// runs every fault of internal/fault against. A layer (the rapid machines,
// the fuzz targets, the linearizability checker, …) registers itself from an
// init function; cmd/tollgate imports the layer packages and asks each layer,
// for each fault, whether it should see the fault and whether it killed it.
// A kill counts only if the same layer passes on the real implementation
// with the same case (Real); one that fails there too is an error.
package mutant

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
)

// Layer is one checking layer.
type Layer struct {
	// Name is the column header in the mutant table, e.g. "rapid".
	Name string
	// Sees reports whether this layer is expected to kill f. A fault the
	// layer cannot see (e.g. one that only shows under concurrency, for a
	// sequential layer) is still run, but surviving it is not a failure.
	// Register makes a nil Sees the one rule every layer follows: f's patch
	// names the layer on its Caught-by line (fault.Fault.CaughtBy).
	Sees func(f fault.Fault) bool
	// Hunt runs the layer against a table carrying f for at most budget,
	// starting from seed, and reports what it found.
	Hunt func(f fault.Fault, budget time.Duration, seed uint64) Outcome
}

// Outcome is what one layer found for one fault.
type Outcome struct {
	Killed   bool
	Property string        // the property or invariant ID that failed
	Elapsed  time.Duration // time until the kill (or the whole budget)
	Seed     uint64        // replays the run
	Replay   string        // a command that replays the kill, if any
	Detail   string        // the failure message, first lines

	// Rerun, when the layer sets it on a kill, runs the very case that
	// failed (the same input, the same seed) again against a table
	// carrying g and reports what it found there. The mutants command
	// reruns every kill against fault.None: a case the real
	// implementation fails too is the layer's false alarm, not a kill.
	Rerun func(g fault.Fault) Outcome
}

var (
	mu     sync.Mutex
	layers = map[string]Layer{}
)

// Expected reports whether the layer called name is expected to kill f:
// whether f's patch names it on its Caught-by line (fault.Fault.CaughtBy).
// It is every layer's Sees.
func Expected(name string, f fault.Fault) bool { return f.CaughtBy(name) }

// Register adds a layer (with a nil Sees: the faults whose patch names it
// on its Caught-by line); registering a name twice panics.
func Register(l Layer) {
	if l.Sees == nil {
		name := l.Name
		l.Sees = func(f fault.Fault) bool { return Expected(name, f) }
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := layers[l.Name]; dup {
		panic("mutant: layer " + l.Name + " registered twice")
	}
	layers[l.Name] = l
}

// Dir is where a layer's hunts write what they found (failing histories,
// reports): the directory name under os.TempDir.
func Dir(name string) string { return filepath.Join(os.TempDir(), name) }

// Layers returns the registered layers sorted by name.
func Layers() []Layer {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Layer, 0, len(layers))
	for _, l := range layers {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Real judges kills against the real implementation (fault.None): a
// layer's kill counts only if the same layer passes there with the same
// case. A kill with a Rerun is rerun. A layer that cannot rerun one case is
// hunted against fault.None once, with the hunts' budget and seed, and that
// hunt stands for every kill of the layer; each layer reads fault.None as
// the real token bucket, so such a layer's kills of credit-table mutants are
// judged by its run on the real token bucket.
type Real struct {
	Budget time.Duration
	Seed   uint64
	hunts  map[string]Outcome
}

// Check returns what l finds on the real implementation with the case of
// kill. If that is a kill too, the layer fails on the real code: kill is a
// false alarm.
func (r *Real) Check(l Layer, kill Outcome) Outcome {
	if kill.Rerun != nil {
		return kill.Rerun(fault.None)
	}
	if out, ok := r.hunts[l.Name]; ok {
		return out
	}
	if r.hunts == nil {
		r.hunts = map[string]Outcome{}
	}
	out := l.Hunt(fault.None, r.Budget, r.Seed)
	r.hunts[l.Name] = out
	return out
}
