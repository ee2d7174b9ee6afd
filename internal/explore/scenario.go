package explore

import (
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
}

// Threads is the number of threads.
func (s Scenario) Threads() int {
	if s.cr != nil {
		return len(s.cr.threads)
	}
	if s.tb != nil {
		return len(s.tb.threads)
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
	return n
}

// CrEnv is what a credit-table step sees when it makes its input: the
// answers of the setup operations and of its thread's earlier steps
// (aligned with the steps; a skipped step's is the zero output).
type CrEnv struct {
	Setup []model.CrOutput[string]
	Mine  []model.CrOutput[string]
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
}

// TokenBucketScenario builds a token-bucket scenario. The keys in collide
// share the first level of the trie (their hashes agree in the low 4 bits
// and differ in the next 4), every other key of the scenario has a first
// level of its own: every trie of every run is given a seed with that
// shape, so runs are deterministic and schedules replay across processes.
func TokenBucketScenario(name, race string, collide []string, setup []model.TBInput[string], threads ...[]model.TBInput[string]) Scenario {
	return Scenario{Name: name, Race: race, Primitive: TokenBucket, tb: &tbScript{setup: setup, threads: threads, collide: collide}}
}

// program builds the explorable program of s over f's table.
func (s Scenario) program(f fault.Fault) (program, error) {
	switch {
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
