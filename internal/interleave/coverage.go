package interleave

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/seam/hooked"
	"github.com/tollgate/tollgate/model"
)

// Coverage of the generated scenarios: for every pair of operations of a
// primitive and every prefix, the kinds of shared word on which the steps
// of the two operations conflicted — touched the same word, one of them
// writing it, while both operations were in flight — in some run the
// search explored. It is computed from the runs themselves: a quiet
// observer names the word of every step as it runs, and each complete run
// is scanned for such pairs of steps.
//
// Two runs the reduction treats as one (spec/explore.md §5) order every
// pair of dependent steps, calls and returns alike, the same way, so the
// runs it prunes show no conflict the runs it keeps do not: the coverage of
// a reduced search within a bound is that of the full one.

// CoverageBound is the preemption bound of the committed coverage table
// (spec/explore-coverage.md) and of the test that checks it: one
// preemption already puts a step of one operation between two of another.
const CoverageBound = 1

// WordKinds describes the word kinds of a primitive's coverage table, in
// its column order.
func WordKinds(p Primitive) [][2]string {
	if p == Credits {
		return [][2]string{
			{"slot.lo", "a slot word, both steps on its low half alone (64-bit loads and compare-and-swaps: every transition but a new holder's reserve)"},
			{"slot.hi", "a slot word's high half (the holder's serial), loaded against a 128-bit write"},
			{"slot.pair", "a slot word, one step a 128-bit operation (a reserve by a holder that is not the slot's last)"},
			{"holder", "a slot's holder word"},
			{"box", "a slot's box word (the payload)"},
			{"published", "a box's published flag"},
			{"closed", "the table's closed flag"},
			{"live", "a holder's liveness, which an exit writes and a sweep reads (not a seam word: spec/explore.md §6)"},
		}
	}
	return [][2]string{
		{"buckets", "the table's trie word (reset_all swaps it)"},
		{"floor", "the trie's floor"},
		{"child", "a child word of a trie node"},
		{"frozen", "a child word frozen for compaction (one step reads or writes a frozen wrapper), or a wrapper's own word"},
		{"bucket", "a cell's bucket word"},
		{"dead", "a cell's bucket word, one step killing it or reading it dead"},
		{"next", "a cell's next word (a chain append)"},
		{"sealed", "a cell's next word, one step sealing it or reading the seal"},
	}
}

// sig is what one step did to one word, as coverage compares steps: the
// word's kind and, for a pair word, the half; whether it wrote.
type sig struct {
	kind  string // base kind: slot, holder, box, published, closed, live; buckets, floor, child, first, bucket, next
	mark  string // the refinement the values show: frozen, dead, sealed (token bucket)
	half  byte   // slot words: 'l' (low half alone), 'h' (high half alone), 'p' (both)
	write bool
}

// conflictKind names the conflict of two steps on one word, or false when
// they do not conflict (neither writes, or they touch disjoint halves of a
// slot word).
func conflictKind(a, b sig) (string, bool) {
	if !a.write && !b.write || a.kind != b.kind {
		return "", false
	}
	switch a.kind {
	case "slot":
		switch {
		case a.half == 'h' || b.half == 'h':
			// The high half changes only with a 128-bit write.
			if a.half == 'p' && a.write || b.half == 'p' && b.write {
				return "slot.hi", true
			}
			return "", false
		case a.half == 'l' && b.half == 'l':
			return "slot.lo", true
		}
		return "slot.pair", true
	case "child":
		if a.mark == "frozen" || b.mark == "frozen" {
			return "frozen", true
		}
	case "bucket":
		if a.mark == "dead" || b.mark == "dead" {
			return "dead", true
		}
	case "next":
		if a.mark == "sealed" || b.mark == "sealed" {
			return "sealed", true
		}
	}
	return a.kind, true
}

// classify names the word of one seam operation, as the program's tracer
// names it, and reads the refinement off the values.
func classify(p Primitive, tr tracer, a hooked.Access) sig {
	name := tr.word(a.Word)
	s := sig{write: a.Wrote()}
	switch p {
	case Credits:
		s.kind, s.half = creditsKind(name, a)
	case TokenBucket:
		s.kind, s.mark = bucketKind(tr, name, a)
	}
	return s
}

// refinedValues returns the values an operation's refinement is read off:
// what a load read; what a store or a successful compare-and-swap wrote
// (and, for the latter, what it replaced); both, for any other operation.
func refinedValues(a hooked.Access) []any {
	values := []any{a.Old, a.New}
	if a.Op == hooked.Load {
		values = values[:1]
	}
	if a.Op == hooked.Store || a.Op == hooked.CAS && a.OK {
		values = values[1:] // what it wrote
		if a.Op == hooked.CAS {
			values = append(values, a.Old)
		}
	}
	return values
}

// creditsKind names a credit-table word's kind, and for a row's word which
// half of it the operation touched (l, h, or p: the pair).
func creditsKind(name string, a hooked.Access) (kind string, half byte) {
	switch {
	case name == "closed":
		return "closed", 0
	case strings.HasPrefix(name, "slots[") && strings.HasSuffix(name, ".word"):
		half = 'p'
		if a.Lo {
			half = 'l'
		} else if a.Hi {
			half = 'h'
		}
		return "slot", half
	case strings.HasPrefix(name, "slots[") && strings.HasSuffix(name, ".holder"):
		return "holder", 0
	case strings.HasPrefix(name, "slots[") && strings.HasSuffix(name, ".box"):
		return "box", 0
	}
	// The one word outside the table: a box's published flag.
	return "published", 0
}

// bucketKind names a token-bucket word's kind and its mark: a bucket
// read or written dead, a cell's next word sealed, a trie child frozen.
func bucketKind(tr tracer, name string, a hooked.Access) (kind, mark string) {
	switch {
	case name == "buckets":
		return "buckets", ""
	case strings.HasSuffix(name, ".floor"):
		return "floor", ""
	case strings.Contains(name, " cell ") && strings.HasSuffix(name, ".word"):
		return "bucket", deadMark(a)
	case strings.Contains(name, " cell ") && strings.HasSuffix(name, ".first"):
		// A cell's first word points to the cell itself. Its one write
		// is the store of its maker, before the cell is published,
		// where no other operation can reach it; every later access
		// reads it, to tell the cell from an inner node. So no two
		// steps conflict on it, and the table has no column for it.
		return "first", ""
	case strings.Contains(name, " cell ") && strings.HasSuffix(name, ".next"):
		return "next", valueMark(tr, a, "sealed", func(v string) bool { return v == "sealed" })
	case strings.HasPrefix(name, "trie") && strings.Contains(name, "["):
		return "child", valueMark(tr, a, "frozen", func(v string) bool { return strings.HasPrefix(v, "frozen(") })
	}
	// A word no walk of the tries reaches that two threads can
	// both touch: a frozen wrapper's own word, which holds what it
	// froze. (A node being built is its builder's alone.)
	return "child", "frozen"
}

// deadMark is "dead" when a bucket's state the operation read or wrote is
// the dead bucket (its whole word, or the low half alone), else "".
func deadMark(a hooked.Access) string {
	mark := ""
	for _, v := range refinedValues(a) {
		if w, ok := v.([2]uint64); ok && w[0] == bucketDead {
			mark = "dead"
		}
		if w, ok := v.(uint64); ok && a.Lo && w == bucketDead {
			mark = "dead"
		}
	}
	return mark
}

// valueMark is mark when the tracer's rendering of a value the operation
// read or wrote satisfies is, else "".
func valueMark(tr tracer, a hooked.Access, mark string, is func(string) bool) string {
	found := ""
	for _, v := range refinedValues(a) {
		if is(tr.value(a.Word, v)) {
			found = mark
		}
	}
	return found
}

// covStep is one step of a run, as coverage keeps it.
type covStep struct {
	thread, op int
	word       unsafe.Pointer // nil: no seam operation; keeps the word's object alive for the run
	sig        sig
	live       int8
	call, ret  bool
}

// covKey is one cell of the table.
type covKey struct {
	prim   Primitive
	a, b   string // operation kinds, in kind order
	prefix string
	kind   string
}

// opSig is one kind of operation's access of a kind of word, in the
// scenarios of one prefix.
type opSig struct {
	prim   Primitive
	prefix string
	op     string
	sig    sig
}

// Coverage is the coverage of the generated scenarios within a bound.
type Coverage struct {
	Bound int
	// Scenarios and Schedules count what was explored; Failures are the
	// scenarios that failed on the real code (none, or the generated set
	// has a false alarm or the code a bug).
	Scenarios, Schedules int
	Failures             []string
	covered              map[covKey]bool
	touched              map[opSig]bool
	sigs                 map[[3]string][]sig // touched, by primitive, prefix and operation
	memo                 map[covKey]bool     // possible, by cell
}

// ComputeCoverage explores every systematic scenario (Systematic) on the
// real code within bound, with the reduction, and records which pairs of
// operations conflicted on which kinds of word.
func ComputeCoverage(bound int) (*Coverage, error) {
	cov := &Coverage{Bound: bound, covered: map[covKey]bool{}, touched: map[opSig]bool{}}
	for _, g := range systematic() {
		if g.hold != "" {
			continue
		}
		if err := cov.explore(g, bound); err != nil {
			return nil, err
		}
	}
	return cov, nil
}

// explore runs the reduced search of one scenario within bound, observing
// every step.
func (cov *Coverage) explore(g generated, bound int) error {
	p, err := g.program(fault.None)
	if err != nil {
		return err
	}
	cov.Scenarios++
	tr := p.tracer()
	c := newController(p.threads())
	c.install()
	defer c.remove()
	defer c.close()
	var steps []covStep
	observe := func(c *controller, r *stepRec) {
		st := covStep{thread: r.thread, op: r.op, live: r.acc.live, call: r.acc.call, ret: r.acc.ret}
		if r.hasRaw {
			st.word, st.sig = r.raw.Word, classify(g.Primitive, tr, r.raw)
		}
		steps = append(steps, st)
	}
	failed := false
	d := newDFS(bound, true)
	for {
		d.depth = 0
		steps = steps[:0]
		r := execute(c, p, d, runOptions{stepCap: DefaultStepCap, observer: observe})
		if d.err != nil {
			return fmt.Errorf("%s: %w", g.Name, d.err)
		}
		if r.status == complete {
			cov.Schedules++
			if r.failure != nil && !failed {
				failed = true
				cov.Failures = append(cov.Failures, fmt.Sprintf("%s: %s: %s", g.Name, r.failure.Kind, r.failure.Detail))
			}
			cov.scan(g, p, steps)
		}
		if !d.backtrack() {
			return nil
		}
	}
}

// opKind is the model kind of operation op of thread t in the run p just
// made.
func opKind(p program, t, op int) string {
	switch p := p.(type) {
	case *crProgram:
		k := p.run.started[t][op]
		return p.run.in[t][k].Kind.String()
	case *tbProgram:
		if op == len(p.script.threads[t]) {
			return "cancel" // a wait's context cancelled after the thread's operations (CancelWaits)
		}
		return p.script.threads[t][op].Kind.String()
	}
	return "?"
}

// scan records the conflicts of one complete run.
func (cov *Coverage) scan(g generated, p program, steps []covStep) {
	ops := cov.noteOps(g, p, steps)
	byWord, live := conflictCandidates(steps)
	for _, idx := range byWord {
		for n, i := range idx {
			for _, j := range idx[n+1:] {
				if k, ok := conflictKind(steps[i].sig, steps[j].sig); ok {
					cov.record(g, steps, ops, i, j, k)
				}
			}
		}
	}
	for n, i := range live {
		for _, j := range live[n+1:] {
			if steps[i].live == liveWrite || steps[j].live == liveWrite {
				cov.record(g, steps, ops, i, j, "live")
			}
		}
	}
}

// opRef is one operation of a run: its thread and its index there.
type opRef struct{ thread, op int }

// runOps is where each operation of a run was called and returned (the
// step's index), and its model kind.
type runOps struct {
	callAt, retAt map[opRef]int
	kinds         map[opRef]string
}

// noteOps reads the operations of a run off its steps, and marks as
// touched every access signature (and liveness effect) each kind of
// operation made.
func (cov *Coverage) noteOps(g generated, p program, steps []covStep) runOps {
	ops := runOps{callAt: map[opRef]int{}, retAt: map[opRef]int{}, kinds: map[opRef]string{}}
	for i, s := range steps {
		if s.op < 0 {
			continue
		}
		o := opRef{s.thread, s.op}
		if _, ok := ops.kinds[o]; !ok {
			ops.kinds[o] = opKind(p, s.thread, s.op)
		}
		if s.call {
			ops.callAt[o] = i
		}
		if s.ret {
			ops.retAt[o] = i
		}
		if s.word != nil {
			cov.touched[opSig{g.Primitive, g.prefix, ops.kinds[o], s.sig}] = true
		}
		if s.live != liveNone {
			cov.touched[opSig{g.Primitive, g.prefix, ops.kinds[o], sig{kind: "live", write: s.live == liveWrite}}] = true
		}
	}
	return ops
}

// conflictCandidates returns the steps of operations that can conflict:
// by word, those on one word; and, in step order, those with a liveness
// effect (a sweep's steps carry their liveness reads along with their
// words).
func conflictCandidates(steps []covStep) (byWord map[unsafe.Pointer][]int, live []int) {
	byWord = map[unsafe.Pointer][]int{}
	for i, x := range steps {
		if x.op < 0 {
			continue
		}
		if x.word != nil {
			byWord[x.word] = append(byWord[x.word], i)
		}
		if x.live != liveNone {
			live = append(live, i)
		}
	}
	return byWord, live
}

// record marks covered the pair of operation kinds of steps i and j, in
// kind order, conflicting as kind, when the steps are of two threads
// whose operations were in flight together (the later one called before
// the earlier one returned).
func (cov *Coverage) record(g generated, steps []covStep, ops runOps, i, j int, kind string) {
	x, y := steps[i], steps[j]
	if x.thread == y.thread {
		return
	}
	ox, oy := opRef{x.thread, x.op}, opRef{y.thread, y.op}
	if ops.callAt[oy] > ops.retAt[ox] {
		return
	}
	a, b := ops.kinds[ox], ops.kinds[oy]
	if opOrder(g.Primitive, b) < opOrder(g.Primitive, a) {
		a, b = b, a
	}
	cov.covered[covKey{g.Primitive, a, b, g.prefix, kind}] = true
}

// covOps are the operation kinds of a primitive's table, in row order.
func covOps(p Primitive) []string {
	if p == Credits {
		return []string{model.CrReserve.String(), model.CrEnqueue.String(), model.CrTake.String(), model.CrFinish.String(),
			model.CrRelease.String(), model.CrSweep.String(), model.CrExit.String(), model.CrClose.String(),
			model.CrEnqueued.String(), model.CrSnapshot.String()}
	}
	return []string{model.TBTake.String(), model.TBPeek.String(), model.TBReset.String(), model.TBResetAll.String(), model.TBReclaim.String(),
		model.TBAdmit.String(), model.TBRetryAfter.String()}
}

func opOrder(p Primitive, op string) int { return slices.Index(covOps(p), op) }

// possible reports whether operations a and b can conflict on words of
// kind from prefix: some access of a and some access of b, in runs of the
// scenarios of that prefix, would conflict on a word of that kind.
func (cov *Coverage) possible(p Primitive, a, b, prefix, kind string) bool {
	if cov.sigs == nil {
		cov.sigs, cov.memo = map[[3]string][]sig{}, map[covKey]bool{}
		for x := range cov.touched {
			k := [3]string{string(x.prim), x.prefix, x.op}
			cov.sigs[k] = append(cov.sigs[k], x.sig)
		}
	}
	key := covKey{p, a, b, prefix, kind}
	if v, ok := cov.memo[key]; ok {
		return v
	}
	found := false
	for _, x := range cov.sigs[[3]string{string(p), prefix, a}] {
		for _, y := range cov.sigs[[3]string{string(p), prefix, b}] {
			if k, ok := conflictKind(x, y); ok && k == kind {
				found = true
			}
		}
	}
	cov.memo[key] = found
	return found
}

// prefixes of a primitive, in order, with what each sets up.
func prefixStates(p Primitive) [][2]string {
	var out [][2]string
	if p == Credits {
		for _, x := range crPrefixes() {
			out = append(out, [2]string{x.name, x.state})
		}
		return out
	}
	for _, x := range tbPrefixes() {
		out = append(out, [2]string{x.name, x.state})
	}
	return out
}

// Cells counts the cells of a primitive's table: covered, and possible
// (both operations touch words of the kind and one writes them).
func (cov *Coverage) Cells(p Primitive) (covered, possible int) {
	ops := covOps(p)
	for i, a := range ops {
		for _, b := range ops[i:] {
			for _, pre := range prefixStates(p) {
				for _, k := range WordKinds(p) {
					if cov.possible(p, a, b, pre[0], k[0]) {
						possible++
						if cov.covered[covKey{p, a, b, pre[0], k[0]}] {
							covered++
						}
					}
				}
			}
		}
	}
	return covered, possible
}

// Markdown renders the coverage table (spec/explore-coverage.md).
func (cov *Coverage) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Coverage of the generated scenarios\n\n")
	fmt.Fprintf(&b, "Written by `go run ./cmd/tollgate explore -coverage > spec/explore-coverage.md`; "+
		"`TestCoverageTable` fails when it differs from what the code computes. spec/explore.md §10 "+
		"says how the scenarios are made and how the table is computed.\n\n")
	fmt.Fprintf(&b, "Every systematic scenario (%d, %d schedules), explored on the real code exhaustively "+
		"within %s, with the reduction. A cell is a pair of operations, the prefix the "+
		"scenario started from, and a kind of shared word: **✓** the steps of the two operations touched "+
		"one word of that kind, one of them writing it, while both operations were in flight, in some "+
		"explored run; **·** in the runs from this prefix both operations touch words of that kind and one "+
		"writes them, but never the same word while both are in flight; blank: no access of one, from this "+
		"prefix, could conflict with an access of the other on such a word. Rows with no possible cell are "+
		"left out.\n\n", cov.Scenarios, cov.Schedules, preemptions(cov.Bound))
	for _, p := range []Primitive{Credits, TokenBucket} {
		covered, possible := cov.Cells(p)
		fmt.Fprintf(&b, "## %s: %d of %d possible cells covered\n\n", p, covered, possible)
		fmt.Fprintf(&b, "Word kinds:\n\n")
		for _, k := range WordKinds(p) {
			fmt.Fprintf(&b, "- `%s`: %s\n", k[0], k[1])
		}
		b.WriteString("\n")
		ops := covOps(p)
		for _, pre := range prefixStates(p) {
			fmt.Fprintf(&b, "### %s — %s\n\n", pre[0], pre[1])
			b.WriteString("| operations |")
			for _, k := range WordKinds(p) {
				fmt.Fprintf(&b, " %s |", k[0])
			}
			b.WriteString("\n|---|")
			for range WordKinds(p) {
				b.WriteString(":-:|")
			}
			b.WriteString("\n")
			for i, x := range ops {
				for _, y := range ops[i:] {
					var row strings.Builder
					any := false
					for _, k := range WordKinds(p) {
						switch {
						case cov.covered[covKey{p, x, y, pre[0], k[0]}]:
							row.WriteString(" ✓ |")
							any = true
						case cov.possible(p, x, y, pre[0], k[0]):
							row.WriteString(" · |")
							any = true
						default:
							row.WriteString("  |")
						}
					}
					if any {
						fmt.Fprintf(&b, "| %s × %s |%s\n", x, y, row.String())
					}
				}
			}
			b.WriteString("\n")
		}
	}
	if len(cov.Failures) > 0 {
		b.WriteString("## Failures on the real code\n\n")
		for _, f := range cov.Failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func preemptions(n int) string {
	if n == 1 {
		return "1 preemption"
	}
	return fmt.Sprintf("%d preemptions", n)
}
