package interleave

import (
	"fmt"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// Primitive names the table a scenario drives.
type Primitive string

// The primitives.
const (
	Credits     Primitive = "credits"
	TokenBucket Primitive = "tokenbucket"
)

// Scenario is one bounded concurrent test: a fresh table, setup operations
// run before the threads start (no switches), then 2–3 threads of 1–3 model
// operations each. Every operation goes through internal/sut and a
// linearization Backend; the history of each run is checked by porcupine
// against model/.
type Scenario struct {
	Name      string
	Race      string // the race it targets
	Primitive Primitive
	cr        *crScript
	tb        *tbScript
	own       *ownerScript // an Owner scenario (owner.go)
	// fixed is a directed run's schedule: Explore replays it once instead
	// of searching (DirectedScenarios).
	fixed string
	// bounds are the named bounds of the code lowered for this scenario
	// (AtBound, edges.go); nil: every bound at its real value.
	bounds map[string]uint64
	// most, when above 0, caps the preemption bound DFS explores the
	// scenario within (Within).
	most int
}

// Within returns s explored within at most n preemptions whatever bound
// the run asks for: for a generated frame that costs several times the
// rest of its family at the default bound (spec/explore.md §11).
func (s Scenario) Within(n int) Scenario {
	s.most = n
	return s
}

// AtBound returns s explored with the code's bound called name (a
// package-level constant max… of impl/, read through hooked.Bound in the
// explored copies) lowered to v.
func (s Scenario) AtBound(name string, v uint64) Scenario {
	b := make(map[string]uint64, len(s.bounds)+1)
	for k, x := range s.bounds {
		b[k] = x
	}
	b[name] = v
	s.bounds = b
	return s
}

// Fixed is the one schedule a directed run's scenario replays (see
// DirectedScenarios), or "" for a scenario that is searched.
func (s Scenario) Fixed() string { return s.fixed }

// Threads is the number of threads.
func (s Scenario) Threads() int {
	if s.cr != nil {
		return len(s.cr.threads)
	}
	if s.tb != nil {
		return len(s.tb.threads)
	}
	if s.own != nil {
		return len(s.own.threads)
	}
	return 0
}

// Ops is the number of operations of the threads (at most: a step may be
// skipped when what it needs did not happen).
func (s Scenario) Ops() int {
	n := 0
	if s.cr != nil {
		for _, t := range s.cr.threads {
			n += len(t)
		}
	}
	if s.tb != nil {
		for _, t := range s.tb.threads {
			n += len(t)
		}
	}
	if s.own != nil {
		for _, t := range s.own.threads {
			n += len(t)
		}
	}
	return n
}

// CrEnv is what a credit-table step sees when it makes its input: the
// answers of the setup operations and of its thread's earlier steps
// (aligned with the steps; a skipped step's is the zero output), and those
// of every thread's steps so far (Threads; nil outside the threads), so
// that a token can be handed from one thread to another (Handed).
type CrEnv struct {
	Setup   []model.CrOutput[string]
	Mine    []model.CrOutput[string]
	Threads [][]model.CrOutput[string]
}

// CrStep makes the input of one credit-table operation; false skips it
// (for instance a finish whose take found nothing).
type CrStep func(e CrEnv) (model.CrInput[string], bool)

type crScript struct {
	setup   []CrStep
	threads [][]CrStep
}

// CreditsScenario builds a credit-table scenario.
func CreditsScenario(name, race string, setup []CrStep, threads ...[]CrStep) Scenario {
	return Scenario{Name: name, Race: race, Primitive: Credits, cr: &crScript{setup: setup, threads: threads}}
}

type tbScript struct {
	setup   []model.TBInput[string]
	threads [][]model.TBInput[string]
	// collide are keys whose hashes share their first trie level (4 bits)
	// and differ at the second: the trie's seed is pinned so that they do.
	collide []string
	// same are keys whose hashes are equal in all 64 bits: they share one
	// chain of cells. The first stands for all of them in collide's shape.
	same []string
	// hashes, when set, is every key's 64-bit hash, in place of the shape
	// collide and same ask for.
	hashes map[string]uint64
	// waits are the (thread, index) of the admits run by Table.Wait
	// (WaitOps, wait.go).
	waits map[[2]int]bool
	// cancels maps a thread to the thread whose waits' context it
	// cancels once its own operations are done (CancelWaits, wait.go).
	cancels map[int]int
}

// TokenBucketScenario builds a token-bucket scenario. The keys in collide
// share the first level of the trie (their hashes agree in the low 4 bits
// and differ in the next 4), every other key of the scenario has a first
// level of its own: every trie of every run is given a seed with that
// shape, so runs are deterministic and schedules replay across processes.
func TokenBucketScenario(name, race string, collide []string, setup []model.TBInput[string], threads ...[]model.TBInput[string]) Scenario {
	return Scenario{Name: name, Race: race, Primitive: TokenBucket, tb: &tbScript{setup: setup, threads: threads, collide: collide}}
}

// SameHash returns s, a token-bucket scenario, with the keys of same given
// one 64-bit hash, that of same[0]: their cells share one chain (an insert
// appends to it, an unlink of its dead head moves the chain up). same[0]
// takes its place in the shape collide asks for; the others follow it.
func (s Scenario) SameHash(same ...string) Scenario {
	if s.tb == nil {
		panic("explore: SameHash of a scenario that is not a token-bucket one")
	}
	tb := *s.tb
	tb.same = append([]string(nil), same...)
	s.tb = &tb
	return s
}

// Hashes returns s, a token-bucket scenario, with every key given the 64-bit
// hash hashes names (the trie reads 4 bits a level, lowest first): for the
// shapes collide and SameHash cannot ask for, such as two keys that share
// two levels. Every key of the scenario must be listed.
func (s Scenario) Hashes(hashes map[string]uint64) Scenario {
	if s.tb == nil {
		panic("explore: Hashes of a scenario that is not a token-bucket one")
	}
	tb := *s.tb
	tb.hashes = hashes
	s.tb = &tb
	return s
}

// reclaims reports whether s is a token-bucket scenario with a reclaim,
// whose searches walk every word of each trie node it visits and whose
// histories are checked against the whole table (CheckTokenBucketTable).
func (s Scenario) reclaims() bool {
	if s.tb == nil {
		return false
	}
	for _, t := range append([][]model.TBInput[string]{s.tb.setup}, s.tb.threads...) {
		for _, in := range t {
			if in.Kind == model.TBReclaim {
				return true
			}
		}
	}
	return false
}

// program builds the explorable program of s over f's table.
func (s Scenario) program(f fault.Fault) (program, error) { return s.programOn(f, nil) }

// programOn builds the explorable program of s over f's table, in memory
// (r nil) or on r's server.
func (s Scenario) programOn(f fault.Fault, r *Remote) (program, error) {
	if r == nil && f != fault.None && f.Server() {
		return nil, fmt.Errorf("explore: %s is a mutant of %s, explored on its server only (Options.Remote; tollgate explore -backend etcd)", f, f.Package())
	}
	if r != nil {
		switch {
		case s.cr != nil && r.Credits != nil:
			if f != fault.None && !f.Credits() {
				return nil, errWrongFault(s, f)
			}
			p := newCrProgram(s, f)
			p.remote = r
			return p, nil
		case s.tb != nil && r.TokenBucket != nil:
			if len(s.tb.waits) > 0 {
				return nil, fmt.Errorf("explore: scenario %s runs Table.Wait, an operation of the in-memory table only", s.Name)
			}
			// A scenario's pinned hashes place keys in the in-memory trie;
			// a server has its own index, so on one they mean nothing and
			// the scenario is its operations alone.
			if f.Credits() {
				return nil, errWrongFault(s, f)
			}
			p, err := newTBProgram(s, f)
			if p != nil {
				p.remote = r
			}
			return p, err
		}
		return nil, fmt.Errorf("explore: scenario %s: %s has no %s table to explore", s.Name, r.Name, s.Primitive)
	}
	switch {
	case s.own != nil:
		if f != fault.None {
			return nil, fmt.Errorf("explore: scenario %s explores the Owner over the real explored table; a mutant of the catalogue has no Owner", s.Name)
		}
		return &opsProgram{o: ownerOps(s)}, nil
	case s.cr != nil:
		if f != fault.None && !f.Credits() {
			return nil, errWrongFault(s, f)
		}
		return newCrProgram(s, f), nil
	case s.tb != nil:
		if f.Credits() {
			return nil, errWrongFault(s, f)
		}
		return newTBProgram(s, f)
	}
	return nil, ErrNotExplorable
}
