package interleave

import (
	"math/rand/v2"
	"slices"
)

// pct is probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
// Nagarakatte, "A randomized scheduler with probabilistic guarantees of
// finding bugs", ASPLOS 2010). Each thread gets a distinct random priority
// among d..d+n-1; d-1 change points are drawn among the k steps a run is
// estimated to take; at every step the highest-priority thread that can run
// runs, and at the i-th change point the thread about to run drops to
// priority i (below every initial one). A bug of depth d (d ordering
// constraints between steps) is found by one run with probability at least
// 1/(n·k^(d-1)).
type pct struct {
	rng     *rand.Rand
	prio    []int
	changes []int // 1-based step numbers, ascending
	next    int
	depth   int
}

func newPCT(rng *rand.Rand, n, depth, k int) *pct {
	p := &pct{rng: rng, prio: make([]int, n), depth: depth}
	for i, v := range rng.Perm(n) {
		p.prio[i] = depth + v
	}
	if k < 1 {
		k = 1
	}
	seen := map[int]bool{}
	for len(p.changes) < depth-1 && len(p.changes) < k {
		c := 1 + rng.IntN(k)
		if !seen[c] {
			seen[c] = true
			p.changes = append(p.changes, c)
		}
	}
	slices.Sort(p.changes)
	return p
}

// fit gives every goroutine started since the run began a priority: a
// random place among the initial ones (those above the change points'),
// the ones at and above it moving up by one.
func (p *pct) fit(v *view) {
	for len(p.prio) < len(v.states) {
		n := 0
		for _, x := range p.prio {
			if x >= p.depth {
				n++
			}
		}
		at := p.depth + p.rng.IntN(n+1)
		for i, x := range p.prio {
			if x >= at {
				p.prio[i] = x + 1
			}
		}
		p.prio = append(p.prio, at)
	}
}

func (p *pct) highest(v *view) int {
	best := -1
	for t, st := range v.states {
		if runnable(st) && (best < 0 || p.prio[t] > p.prio[best]) {
			best = t
		}
	}
	return best
}

func (p *pct) choose(v *view) (int, bool) {
	p.fit(v)
	t := p.highest(v)
	for p.next < len(p.changes) && p.changes[p.next] <= v.depth+1 {
		if p.changes[p.next] == v.depth+1 {
			p.prio[t] = p.next + 1
			t = p.highest(v)
		}
		p.next++
	}
	return t, t >= 0
}

func (p *pct) stepped(*stepRec) {}

// pick draws a select's case.
func (p *pct) pick(ready []int) int { return ready[p.rng.IntN(len(ready))] }

// walk is a uniform random walk: every step, any thread that can run.
type walk struct {
	rng  *rand.Rand
	live []int
}

func (w *walk) choose(v *view) (int, bool) {
	w.live = w.live[:0]
	for t, st := range v.states {
		if runnable(st) {
			w.live = append(w.live, t)
		}
	}
	if len(w.live) == 0 {
		return 0, false
	}
	return w.live[w.rng.IntN(len(w.live))], true
}

func (w *walk) stepped(*stepRec) {}

// pick draws a select's case.
func (w *walk) pick(ready []int) int { return ready[w.rng.IntN(len(ready))] }
