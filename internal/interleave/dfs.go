package interleave

import "fmt"

// Exhaustive search: stateless depth-first search over the choice of thread
// at every step, replaying each schedule from a fresh instance, bounded by
// the number of preemptions and reduced with sleep sets.
//
// Sleep sets (Godefroid 1996). When a node has explored the subtree of
// choice a and moves on to choice b, a goes to sleep in b's subtree: any
// run there that takes a's step before anything dependent on it has
// happened is the same trace as a run of a's subtree (a's step commutes
// with every step in between), so it need not be run again. a wakes up
// when a step dependent on its step runs. The step of a sleeping thread is
// known exactly: it was run in the sibling, including the outcome of a
// compare-and-swap, so a failed one counts as the read it was.
//
// Sleep sets and the preemption bound. A plain combination loses runs: the
// run pruned in b's subtree may be within the bound while the equivalent
// run of a's subtree, which takes a's step earlier, costs more preemptions
// and was cut off. So a sleeping thread is pruned at node n only if moving
// its step back to the node where it was explored costs no more
// preemptions, for every way the run can go on: with π the steps from that
// node o to n, cost(o, a·π) + switch(last(π) → r) ≤ cost(o, π·a) +
// switch(a → r) for every thread r that could run next. Otherwise the
// thread is woken and explored as an ordinary choice. With that condition
// the classic argument goes through within the bound: every pruned run is
// equivalent to a run of no greater cost that the search covers.
// TestReductionLosesNothing checks the result on every scenario: the set of
// outcomes is the same with the reduction on and off.

// sleeper is a thread whose next step is known and need not be explored.
type sleeper struct {
	thread    int
	acc       access
	midAfter  bool
	doneAfter bool
	origin    int // depth of the node that explored it
}

// dnode is one decision of the current path.
type dnode struct {
	choices  []int
	next     int       // index into choices of the current choice
	done     []sleeper // choices whose subtrees are explored
	sleep    []sleeper // inherited sleeping threads
	last     int       // thread of the previous step (-1 at the root)
	lastMid  bool      // whether it was inside an operation after it
	preempts int       // preemptions before this node
	// the step the current choice ran
	acc       access
	midAfter  bool
	doneAfter bool
	ran       bool
	// cases, when caseSet, are the ready cases of the select the step ran
	// (chan.go), ci the one taken in the current run: the search explores
	// each, for the node's current thread, before the next thread.
	cases   []int
	ci      int
	caseSet bool
}

func (n *dnode) choice() int { return n.choices[n.next] }

// dfs is the chooser of the exhaustive search.
type dfs struct {
	bound  int
	reduce bool
	path   []*dnode
	free   []*dnode
	err    error // nondeterminism of the code under test
	depth  int   // steps run so far in the current run
	// pruned counts sleeping threads not explored; woken counts sleeping
	// threads explored because pruning them could have lost a run.
	pruned, woken int
}

func newDFS(bound int, reduce bool) *dfs { return &dfs{bound: bound, reduce: reduce} }

func (d *dfs) node() *dnode {
	if k := len(d.free); k > 0 {
		n := d.free[k-1]
		d.free = d.free[:k-1]
		*n = dnode{choices: n.choices[:0], done: n.done[:0], sleep: n.sleep[:0]}
		return n
	}
	return &dnode{}
}

// choose replays the current path while the run is on it; past its end it
// opens a node whose choices are the runnable threads within the bound
// that sleep sets do not prune (the thread of the previous step first),
// and takes the first. It reports false when no choice is left, or the
// code under test diverged from the replay (d.err).
func (d *dfs) choose(v *view) (int, bool) {
	if v.depth < len(d.path) {
		return d.replay(v)
	}
	n := d.node()
	n.last, n.lastMid = v.last, v.lastMid()
	if v.depth > 0 && !d.inherit(n, v) {
		return 0, false
	}
	if n.last >= 0 {
		d.add(n, v, n.last) // continuing costs nothing: explored first
	}
	for t := range v.states {
		d.add(n, v, t)
	}
	if len(n.choices) == 0 {
		d.free = append(d.free, n)
		return 0, false
	}
	d.path = append(d.path, n)
	return n.choice(), true
}

// replay returns the current choice of the path's node at v's depth,
// failing (d.err) when that thread cannot run or the previous step's
// thread differs: the code under test is not deterministic.
func (d *dfs) replay(v *view) (int, bool) {
	n := d.path[v.depth]
	t := n.choice()
	if !runnable(v.states[t]) || n.last != v.last {
		d.err = fmt.Errorf("explore: replay diverged at step %d: the code under test is not deterministic", v.depth)
		return 0, false
	}
	return t, true
}

// inherit sets new node n's preemptions from its parent's (one more if
// the parent's choice preempted its thread) and, with the reduction on,
// puts to sleep in n every thread asleep or explored at the parent whose
// step is independent of the parent's choice's step. False when a
// sleeper's replay diverged (d.err).
func (d *dfs) inherit(n *dnode, v *view) bool {
	p := d.path[v.depth-1]
	n.preempts = p.preempts
	if p.last >= 0 && p.choice() != p.last && p.lastMid {
		n.preempts++
	}
	if !d.reduce {
		return true
	}
	c := p.choice()
	for _, set := range [2][]sleeper{p.sleep, p.done} {
		for _, s := range set {
			if s.thread == c {
				continue
			}
			a, ok := d.current(s, v)
			if !ok {
				return false
			}
			if !dependent(a, p.acc) {
				n.sleep = append(n.sleep, s)
			}
		}
	}
	return true
}

// add makes thread t a choice of n unless it cannot run, is a choice
// already, would preempt beyond the bound, or sleeps and may be pruned.
func (d *dfs) add(n *dnode, v *view, t int) {
	if !runnable(v.states[t]) {
		return
	}
	for _, c := range n.choices {
		if c == t {
			return
		}
	}
	if t != n.last && n.lastMid && n.preempts+1 > d.bound {
		return
	}
	for _, s := range n.sleep {
		if s.thread == t {
			if d.prunable(s, v) {
				d.pruned++
				return
			}
			d.woken++
			break
		}
	}
	n.choices = append(n.choices, t)
}

// current is the step of sleeping thread s as it would run now, in the
// current run: the step recorded when it was explored (in an earlier run,
// whose addresses are gone), on the word its thread is paused before in
// this run. The thread has not run since the node that explored it, and the
// runs agree up to that node, so it is paused before the same operation on
// the same word; that word's address in this run is the thread's pending
// word. So the sleeper's step and the step just run are compared by their
// addresses in one run, which is exact.
func (d *dfs) current(s sleeper, v *view) (access, bool) {
	a := s.acc
	if a.addr == nil {
		return a, true
	}
	if a.addr = v.pend[s.thread]; a.addr == nil {
		d.err = fmt.Errorf("explore: replay diverged at step %d: sleeping thread %d is not paused before a seam operation: the code under test is not deterministic", v.depth, s.thread)
		return a, false
	}
	return a, true
}

// prunable reports whether sleeping thread s may be left unexplored at the
// node about to be created at depth v.depth (see the comment at the top).
func (d *dfs) prunable(s sleeper, v *view) bool {
	o := d.path[s.origin]
	pi := d.path[s.origin:]
	// c1: the steps π from o, then a; c2: a first, then π.
	c1, c2 := 0, 0
	last, mid := o.last, o.lastMid
	for _, n := range pi {
		c1 += switchCost(last, mid, n.choice())
		last, mid = n.choice(), n.midAfter
	}
	c1 += switchCost(last, mid, s.thread)
	c2 += switchCost(o.last, o.lastMid, s.thread)
	last, mid = s.thread, s.midAfter
	for _, n := range pi {
		c2 += switchCost(last, mid, n.choice())
		last, mid = n.choice(), n.midAfter
	}
	l2 := pi[len(pi)-1]
	someone := false
	for r, st := range v.states {
		if st == finished || (r == s.thread && s.doneAfter) {
			continue
		}
		someone = true
		f1, f2 := 0, 0
		if r != s.thread && s.midAfter {
			f1 = 1
		}
		if r != l2.choice() && l2.midAfter {
			f2 = 1
		}
		if c2+f2 > c1+f1 {
			return false
		}
	}
	return someone || c2 <= c1
}

// switchCost is 1 when running t after a step of last that left it inside
// an operation is a preemption.
func switchCost(last int, lastMid bool, t int) int {
	if last >= 0 && t != last && lastMid {
		return 1
	}
	return 0
}

// pick takes, for the select of the current step, the case the path
// says, or on a new step the first of the ready ones, to explore the
// others on backtracking.
func (d *dfs) pick(ready []int) int {
	n := d.path[d.depth]
	if !n.caseSet {
		n.cases = append(n.cases[:0], ready...)
		n.ci, n.caseSet = 0, true
		return ready[0]
	}
	if len(n.cases) != len(ready) {
		d.err = fmt.Errorf("explore: replay diverged at step %d: a select had %d ready cases, then %d: the code under test is not deterministic", d.depth+1, len(n.cases), len(ready))
		return ready[0]
	}
	for i, k := range ready {
		if n.cases[i] != k {
			d.err = fmt.Errorf("explore: replay diverged at step %d: a select's ready cases changed: the code under test is not deterministic", d.depth+1)
			return ready[0]
		}
	}
	return n.cases[n.ci]
}

func (d *dfs) stepped(r *stepRec) {
	n := d.path[d.depth]
	if n.ran && (!n.acc.same(r.acc) || n.midAfter != r.midAfter || n.doneAfter != r.doneAfter) {
		d.err = fmt.Errorf("explore: replay diverged at a step of thread %d: the code under test is not deterministic", r.thread)
	}
	n.acc, n.midAfter, n.doneAfter, n.ran = r.acc, r.midAfter, r.doneAfter, true
	d.depth++
}

// backtrack moves to the next unexplored choice; false when the tree is
// done.
func (d *dfs) backtrack() bool {
	for k := len(d.path) - 1; k >= 0; k-- {
		n := d.path[k]
		if n.caseSet && n.ci+1 < len(n.cases) {
			// The same thread's step, taking the select's next case.
			n.ci++
			n.ran = false
			d.free = append(d.free, d.path[k+1:]...)
			d.path = d.path[:k+1]
			return true
		}
		if n.next+1 < len(n.choices) {
			n.done = append(n.done, sleeper{thread: n.choice(), acc: n.acc, midAfter: n.midAfter, doneAfter: n.doneAfter, origin: k})
			n.next++
			n.ran = false
			n.caseSet = false
			d.free = append(d.free, d.path[k+1:]...)
			d.path = d.path[:k+1]
			return true
		}
	}
	d.free = append(d.free, d.path...)
	d.path = d.path[:0]
	return false
}
