package faultrun

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/linearizability"
)

// A soak is a run of windows drawn from one seed: each window is one
// recording of one primitive's fault workload, with one fault or two
// overlapping, each striking at a drawn moment and holding for a drawn
// time. Window i of seed s is drawn from s and i alone (Draw), so the same
// seed gives the same plan whatever the machine, and a window can be run
// again by itself.

// Atom is a fault a soak may draw, as a wing knows it.
type Atom struct {
	// Name is the fault's name in its wing (Step.Fault).
	Name string
	// Hold is the least and the most time the fault may hold.
	Hold [2]time.Duration
	// On names what the fault acts on (a process, a link): two faults on
	// one thing are never drawn together.
	On string
	// Single marks a fault never drawn with another.
	Single bool
}

// Step is one fault of a window.
type Step struct {
	Fault string
	// Share is the share of the recording's calls made before the first
	// step strikes (0 for the second step).
	Share float64
	// After is how long after the first step's strike the second strikes:
	// less than the first's hold, so that the two overlap (0 for the first
	// step).
	After time.Duration
	// Hold is how long the fault holds once it has struck.
	Hold time.Duration
}

// Window is one recording of a soak.
type Window struct {
	Index     int
	Seed      uint64 // the recording's operation scripts' seed
	Primitive string
	Steps     []Step
}

// Span is how long the window's faults last together, from the first
// strike to the end of the last hold (as planned: a fault that must wait
// for a write in flight, or a server slow to restart, lasts longer).
func (w Window) Span() time.Duration {
	var span time.Duration
	for _, s := range w.Steps {
		span = max(span, s.After+s.Hold)
	}
	return span
}

// Name is the window's name in rows and file names: its index and its
// faults.
func (w Window) Name() string {
	names := make([]string, len(w.Steps))
	for i, s := range w.Steps {
		names[i] = s.Fault
	}
	return fmt.Sprintf("soak%d-%s", w.Index, strings.Join(names, "+"))
}

func (w Window) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "window %d (seed %d, %s):", w.Index, w.Seed, w.Primitive)
	for i, s := range w.Steps {
		if i == 0 {
			fmt.Fprintf(&b, " %s at %.0f%% of the calls for %v", s.Fault, 100*s.Share, s.Hold)
		} else {
			fmt.Fprintf(&b, "; %s %v after it for %v", s.Fault, s.After, s.Hold)
		}
	}
	return b.String()
}

// PairShare is the share of windows drawn with two overlapping faults.
const PairShare = 0.5

// PairChance is the share of windows Draw gives two faults, drawing from
// atoms: PairShare of those whose first fault may be paired (not Single,
// and with another atom acting on something else).
func PairChance(atoms []Atom) float64 {
	if len(atoms) == 0 {
		return 0
	}
	pairable := 0
	for _, a := range atoms {
		if a.Single {
			continue
		}
		for _, b := range atoms {
			if !b.Single && b.On != a.On {
				pairable++
				break
			}
		}
	}
	return PairShare * float64(pairable) / float64(len(atoms))
}

// Draw draws window index of the soak of seed: the primitive (one of
// prims), the first fault among atoms, when it strikes (at 10–50% of the
// calls) and how long it holds; with probability PairShare a second fault
// that acts on something else, striking while the first holds. It depends
// on seed, index, prims and atoms alone.
func Draw(seed uint64, index int, prims []string, atoms []Atom) Window {
	if len(atoms) == 0 || len(prims) == 0 {
		panic("faultrun: Draw with no atoms or no primitives")
	}
	r := rand.New(rand.NewPCG(seed, uint64(index)))
	w := Window{Index: index, Seed: r.Uint64N(1<<31) + 1, Primitive: prims[r.IntN(len(prims))]}
	first := atoms[r.IntN(len(atoms))]
	s := Step{Fault: first.Name, Share: 0.1 + 0.4*r.Float64(), Hold: hold(r, first)}
	s.Share = float64(int(s.Share*100)) / 100
	w.Steps = append(w.Steps, s)
	if first.Single || r.Float64() >= PairShare {
		return w
	}
	var others []Atom
	for _, a := range atoms {
		if !a.Single && a.On != first.On {
			others = append(others, a)
		}
	}
	if len(others) == 0 {
		return w
	}
	second := others[r.IntN(len(others))]
	after := time.Duration(r.Int64N(int64(s.Hold)*8/10 + 1)).Round(time.Millisecond)
	w.Steps = append(w.Steps, Step{Fault: second.Name, After: after, Hold: hold(r, second)})
	return w
}

// hold draws a hold in a's range, to the millisecond.
func hold(r *rand.Rand, a Atom) time.Duration {
	lo, hi := a.Hold[0], a.Hold[1]
	if hi <= lo {
		return lo
	}
	return (lo + time.Duration(r.Int64N(int64(hi-lo)))).Round(time.Millisecond)
}

// Plan is the first n windows of the soak of seed.
func Plan(seed uint64, n int, prims []string, atoms []Atom) []Window {
	ws := make([]Window, n)
	for i := range ws {
		ws[i] = Draw(seed, i, prims, atoms)
	}
	return ws
}

// Prims are the primitives a soak draws from.
var Prims = []string{linearizability.PrimitiveTokenBucket, linearizability.PrimitiveCredits}

// PaceFaults throttles the recording's calls while a window's faults
// hold: the calls between the first strike and share end of them spread
// over span, so that faults that do not block calls (a crash refuses them
// at once) still find writes in flight and leave calls for after them.
// It returns what ends the throttle.
func (r *Run) PaceFaults(span time.Duration, from, end float64) func() {
	calls := (end - from) * float64(r.Total)
	if calls < 1 {
		calls = 1
	}
	r.Throttle(time.Duration(float64(span) / calls))
	return func() { r.Throttle(0) }
}

// Steps returns the faults of w's steps, in order, found among a wing's
// atoms by name (atom gives each one's Atom). A window naming a fault the
// wing lacks, or none at all, is an error naming the wing and the window.
func Steps[A any](wing string, w Window, atoms []A, atom func(A) Atom) ([]A, error) {
	byName := map[string]A{}
	for _, a := range atoms {
		byName[atom(a).Name] = a
	}
	var acts []A
	for _, st := range w.Steps {
		a, ok := byName[st.Fault]
		if !ok {
			return nil, fmt.Errorf("%s: soak window %d: no fault %q", wing, w.Index, st.Fault)
		}
		acts = append(acts, a)
	}
	if len(acts) == 0 {
		return nil, fmt.Errorf("%s: soak window %d has no fault", wing, w.Index)
	}
	return acts, nil
}

// Overlap runs w's faults as planned: do(0, first step, struck) at once
// (the caller has waited for the first step's share of the calls), and,
// if w has a second step, do(1, second step, nothing) its After later than
// the first's strike, which the first reports by calling struck (or by
// returning, struck or not), unless the run stops first. It waits for
// both and returns their errors, each named by its fault, joined.
func (r *Run) Overlap(w Window, do func(i int, st Step, struck func()) error) error {
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		errs      []string
		strikeCh  = make(chan struct{})
		strikeOne sync.Once
	)
	struck := func() { strikeOne.Do(func() { close(strikeCh) }) }
	run := func(i int, signal func()) {
		defer wg.Done()
		defer signal()
		if err := do(i, w.Steps[i], signal); err != nil {
			mu.Lock()
			errs = append(errs, w.Steps[i].Fault+": "+err.Error())
			mu.Unlock()
		}
	}
	wg.Add(1)
	go run(0, struck)
	if len(w.Steps) > 1 {
		select {
		case <-strikeCh:
			time.Sleep(w.Steps[1].After)
			wg.Add(1)
			go run(1, func() {})
		case <-r.Stop:
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Of is a window of prim with the named faults, not drawn but given (a
// test's, or one to run again by hand): the first strikes at 30% of the
// calls, the second after the first's strike, each holding for hold.
func Of(prim string, hold, after time.Duration, faults ...string) Window {
	w := Window{Seed: 1, Primitive: prim}
	for i, f := range faults {
		st := Step{Fault: f, Hold: hold}
		if i == 0 {
			st.Share = 0.3
		} else {
			st.After = after
		}
		w.Steps = append(w.Steps, st)
	}
	return w
}
