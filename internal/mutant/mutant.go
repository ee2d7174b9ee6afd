// Package mutant is the registry of checking layers that the mutants command
// runs every fault of internal/fault against. A layer (the rapid machines,
// the fuzz targets, the linearizability checker, …) registers itself from an
// init function; cmd/tollgate imports the layer packages and asks each layer,
// for each fault, whether it should see the fault and whether it killed it.
package mutant

import (
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
}

var (
	mu     sync.Mutex
	layers = map[string]Layer{}
)

// Register adds a layer; registering a name twice panics.
func Register(l Layer) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := layers[l.Name]; dup {
		panic("mutant: layer " + l.Name + " registered twice")
	}
	layers[l.Name] = l
}

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
