package interleave

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/tollgate/tollgate/explore/rt"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/seam/hooked"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// newTBTable builds the explored token-bucket table of a fault.
var newTBTable = func(f fault.Fault) sut.TBTable[string] { return sut.NewHookedTBTable[string](f) }

func errWrongFault(s Scenario, f fault.Fault) error {
	return fmt.Errorf("explore: scenario %s is a %s scenario; mutant %s is not a %s mutant", s.Name, s.Primitive, f, s.Primitive)
}

// tbProgram explores a token-bucket scenario.
type tbProgram struct {
	sc       Scenario
	script   *tbScript
	fault    fault.Fault
	cache    *verdicts
	words    *words
	keys     []string
	limits   map[string]model.Limits // the limits each key is used with
	peekAt   int64                   // the clock of the final peeks
	frozen   bool                    // one clock reading and no resets: T1 conservation holds
	reclaims bool                    // some operation is a reclaim: check the whole table
	waits    bool                    // some operation is a wait: the table's clock is the run's (wait.go)
	waitFrom int64                   // the table's clock at the start of a run with waits
	checked  int
	dir      string
	fname    string
	run      *tbRun
	remote   *Remote // nil: the hooked in-memory table
}

type tbRun struct {
	table   sut.TBTable[string]
	backend linearizability.TBBackend
	setup   []model.TBOutput
	out     [][]model.TBOutput
	ops     []linearizability.TBOp
	final   []linearizability.TBOp
	// The operations' overlap, for the trie's shape (TM1, shapeCheck):
	// inflight counts the operations between their first step and their
	// return, calls every operation begun; solo is set when a reclaim
	// returns having overlapped no other operation and cleared by any
	// overlap after it (the run's tail since then is sequential); last is
	// true while that reclaim is the last operation to change the trie.
	inflight, calls int
	solo, last      bool
	// rounds are the threads' waits' rounds in flight, ctxs and cancels
	// the contexts of the threads' waits one cancels, failed the error of
	// each wait that failed with its context's (wait.go).
	rounds  []waitRound
	ctxs    []context.Context
	cancels []context.CancelFunc
	failed  map[[2]int]string
}

func newTBProgram(s Scenario, f fault.Fault) (*tbProgram, error) {
	p := &tbProgram{sc: s, script: s.tb, fault: f, cache: newVerdicts(), limits: map[string]model.Limits{}, reclaims: s.reclaims()}
	seen := map[string]bool{}
	clocks := map[int64]bool{}
	p.frozen = true
	visit := func(in model.TBInput[string]) {
		switch in.Kind {
		case model.TBReset, model.TBResetAll, model.TBReclaim:
			p.frozen = false
		}
		if in.Kind == model.TBReclaim {
			clocks[in.NowMs] = true
			p.peekAt = max(p.peekAt, in.NowMs)
		}
		if in.Kind == model.TBResetAll || in.Kind == model.TBReclaim {
			return
		}
		if !seen[in.Key] {
			seen[in.Key] = true
			p.keys = append(p.keys, in.Key)
		}
		if in.Kind != model.TBReset {
			if l, ok := p.limits[in.Key]; ok && l != in.Limits {
				p.frozen = false
			}
			p.limits[in.Key] = in.Limits
			clocks[in.NowMs] = true
			p.peekAt = max(p.peekAt, in.NowMs)
		}
	}
	for _, in := range s.tb.setup {
		visit(in)
	}
	for _, t := range s.tb.threads {
		for _, in := range t {
			visit(in)
		}
	}
	if len(clocks) > 1 {
		p.frozen = false
	}
	if len(s.tb.waits)+len(s.tb.cancels) > 0 {
		from, err := s.tb.checkWaits(s.Name)
		if err != nil {
			return nil, err
		}
		// A wait's rounds read a clock that moves: no frozen clock.
		p.waits, p.waitFrom, p.frozen = true, from, false
	}
	for _, k := range append(append([]string(nil), s.tb.collide...), s.tb.same...) {
		if !seen[k] {
			return nil, fmt.Errorf("explore: scenario %s: colliding key %q is not used", s.Name, k)
		}
	}
	if s.tb.hashes != nil {
		if len(s.tb.collide)+len(s.tb.same) > 0 {
			return nil, fmt.Errorf("explore: scenario %s: hashes given with colliding keys: give every hash", s.Name)
		}
		for _, k := range p.keys {
			if _, ok := s.tb.hashes[k]; !ok {
				return nil, fmt.Errorf("explore: scenario %s: key %q has no hash", s.Name, k)
			}
		}
	}
	if len(s.tb.same) == 1 {
		return nil, fmt.Errorf("explore: scenario %s: one key of the same hash: it needs two or more", s.Name)
	}
	return p, nil
}

func (p *tbProgram) threads() int { return len(p.script.threads) }

func (p *tbProgram) histories() int { return p.checked }

func (p *tbProgram) writeFiles(dir, name string) { p.dir, p.fname = dir, name }

func (p *tbProgram) begin(c *controller) []func() {
	if p.remote != nil {
		return p.beginRemote(c)
	}
	r := &tbRun{}
	var tab sut.TBTable[string]
	if p.waits {
		tab = p.waitTable(c, r)
	} else {
		tab = newTBTable(p.fault)
	}
	lay := tableLayout(tab)
	if p.words == nil {
		p.words = newWords(lay)
		p.words.keys = p.keys
		if p.words.trie != nil {
			var others []string
			for _, k := range p.keys {
				if !slices.Contains(p.script.collide, k) && !slices.Contains(p.script.same[min(1, len(p.script.same)):], k) {
					others = append(others, k)
				}
			}
			p.words.hash = pinnedHash(p.script.collide, others, p.script.same)
			if hs := p.script.hashes; hs != nil {
				p.words.hash = func(k string) uint64 { return hs[k] }
			}
		}
	}
	w := p.words
	w.reset(lay)
	if tries := w.trie; tries != nil {
		buckets := tries.Buckets()
		w.addTrie(tries.Trie(), "trie0")
		c.onAccess = func(a hooked.Access) {
			if a.Word != buckets || a.Op != hooked.Store || !a.Wrote() {
				return
			}
			// A reset_all published a fresh trie: pin its seed before any
			// other thread can reach it (nothing runs between the store and
			// this report), and name it by the operation that made it.
			name := "trie(setup)"
			if cur := c.cur; cur != nil {
				name = fmt.Sprintf("trie(T%d#%d)", cur.id, cur.curOp)
			}
			w.addTrie(tries.Trie(), name)
		}
	}
	r.table, r.backend = tab, linearizability.Local((&sut.TokenBucket[string]{Table: tab}).Apply)
	return p.scripts(c, r)
}

// beginRemote starts a run on a fresh table of the remote backend.
func (p *tbProgram) beginRemote(c *controller) []func() {
	b, err := p.remote.TokenBucket()
	if err != nil {
		panic(fmt.Sprintf("explore: a fresh %s table: %v", p.remote.Name, err))
	}
	return p.scripts(c, &tbRun{backend: b})
}

// scripts runs the setup on r (in direct mode) and returns the threads'
// bodies.
func (p *tbProgram) scripts(c *controller, r *tbRun) []func() {
	n := p.threads()
	r.out = make([][]model.TBOutput, n)
	p.run = r
	for _, in := range p.script.setup {
		var out model.TBOutput
		call, ret := c.operation(liveNone, func() { out = p.doTracked(r, n, in) })
		r.setup = append(r.setup, out)
		r.ops = append(r.ops, linearizability.TBOp{Client: n, Input: in, Output: out, Call: call, Return: ret})
	}
	bodies := make([]func(), n)
	for t := range bodies {
		bodies[t] = func() {
			for i, in := range p.script.threads[t] {
				var out model.TBOutput
				var last *linearizability.TBOp
				skip := false
				call, ret := c.operation(liveNone, func() {
					if p.script.isWait(t, i) {
						out, last, skip = p.doWait(r, t, i, in)
						return
					}
					out = p.doTracked(r, t, in)
				})
				r.out[t] = append(r.out[t], out)
				if skip {
					continue
				}
				if last == nil {
					last = &linearizability.TBOp{Client: t, Input: in, Output: out, Call: call}
				}
				last.Return = ret
				r.ops = append(r.ops, *last)
			}
			if cancel := p.cancelOp(r, t); cancel != nil {
				c.operation(liveNone, cancel)
			}
		}
	}
	return bodies
}

func (p *tbProgram) do(client int, in model.TBInput[string]) model.TBOutput {
	out, err := p.run.backend.Do(client, in)
	if err != nil {
		where := "in-process"
		if p.remote != nil {
			where = p.remote.Name
		}
		panic(fmt.Sprintf("explore: the %s backend failed: %v", where, err))
	}
	return out
}

// doTracked is do, keeping the account of overlaps that shapeCheck
// needs. It runs inside the operation: its first statement comes before
// the operation's first step, its last after its last.
func (p *tbProgram) doTracked(r *tbRun, client int, in model.TBInput[string]) model.TBOutput {
	return p.track(r, in.Kind, func() model.TBOutput { return p.do(client, in) })
}

// track runs do, an operation of kind, keeping the account of overlaps.
func (p *tbProgram) track(r *tbRun, kind model.TBKind, do func() model.TBOutput) model.TBOutput {
	r.inflight++
	r.calls++
	alone, calls := r.inflight == 1, r.calls
	if !alone {
		r.solo = false // an overlap after the last solo reclaim
	}
	out := do()
	r.inflight--
	switch {
	case kind == model.TBReclaim:
		r.solo = alone && r.calls == calls
		r.last = r.solo
	case kind != model.TBPeek:
		r.last = false
	}
	return out
}

func (p *tbProgram) end(c *controller, outcome bool) (*Failure, string) {
	r := p.run
	if p.waits {
		rt.StopClock()
	}
	n := p.threads()
	// The trie's shape, before the final peeks touch it.
	shape := p.shapeCheck(r)
	// Final peeks: operations of the history, after every other one.
	r.final = r.final[:0]
	for _, k := range p.keys {
		in := model.TBInput[string]{Kind: model.TBPeek, Key: k, Limits: p.limits[k], NowMs: p.peekAt}
		var out model.TBOutput
		call, ret := c.operation(liveNone, func() { out = p.do(n+1, in) })
		r.final = append(r.final, linearizability.TBOp{Client: n + 1, Input: in, Output: out, Call: call, Return: ret})
	}
	f := p.verdict(r)
	if f == nil {
		f = shape
	}
	if !outcome {
		return f, ""
	}
	var b strings.Builder
	for t := range r.out {
		fmt.Fprintf(&b, "T%d:", t)
		for k, o := range r.out[t] {
			fmt.Fprintf(&b, " %s", o.Answer(p.script.threads[t][k].Kind))
		}
		b.WriteString("; ")
	}
	for _, op := range r.final {
		fmt.Fprintf(&b, "%q %s; ", op.Input.Key, op.Output.Answer(model.TBPeek))
	}
	b.WriteString(p.dump())
	return f, b.String()
}

func (p *tbProgram) verdict(r *tbRun) *Failure {
	report := p.dir != ""
	all := append(append([]linearizability.TBOp(nil), r.ops...), r.final...)
	p.cache.keyb = tbKey(&p.cache.canon, p.cache.keyb, all)
	if !report {
		if f, ok := p.cache.m[string(p.cache.keyb)]; ok {
			return f.copy()
		}
	}
	key := string(p.cache.keyb)
	p.checked++
	h := linearizability.TBHistory{Workload: p.sc.Name, Mutant: p.fault.String(), Ops: all}
	if h.Mutant == "none" {
		h.Mutant = ""
	}
	check := linearizability.CheckTokenBucket
	if p.reclaims {
		// A reclaim's count is the whole table's: judge it too.
		check = linearizability.CheckTokenBucketTable
	}
	rep, err := check(h, linearizability.Options{Dir: p.dir, Name: p.fname})
	var f *Failure
	switch {
	case err != nil:
		f = &Failure{Kind: KindLinearizability, Thread: -1, Detail: "the history cannot be checked: " + err.Error()}
	case rep.Result != linearizability.Ok:
		f = &Failure{Kind: KindLinearizability, Thread: -1, Invariant: rep.Invariant, Detail: rep.Detail,
			HTMLPath: rep.HTMLPath, JSONPath: rep.JSONPath}
	case p.frozen:
		f = p.conservation(r)
		if f != nil && report {
			if rep, err := check(h, linearizability.Options{Dir: p.dir, Name: p.fname, AlwaysWrite: true}); err == nil {
				f.HTMLPath, f.JSONPath = rep.HTMLPath, rep.JSONPath
			}
		}
	}
	if !report {
		p.cache.m[key] = f
	}
	return f.copy()
}

// conservation is T1 on a frozen clock with no resets: for every key, the
// cost admitted by successful takes plus the tokens left equals the
// capacity.
func (p *tbProgram) conservation(r *tbRun) *Failure {
	admitted := map[string]float64{}
	for _, op := range r.ops {
		if (op.Input.Kind == model.TBTake || op.Input.Kind == model.TBAdmit) && op.Output.OK && op.Output.Invalid == "" {
			admitted[op.Input.Key] += op.Input.Cost
		}
	}
	for _, op := range r.final {
		k := op.Input.Key
		capacity := p.limits[k].Capacity
		if got := admitted[k] + op.Output.Tokens; math.Abs(got-capacity) > 1e-9*capacity {
			return &Failure{Kind: KindInvariant, Thread: -1, Invariant: "T1", Detail: fmt.Sprintf(
				"key %q on a frozen clock: admitted cost %v + tokens left %v = %v, not the capacity %v",
				k, admitted[k], op.Output.Tokens, got, capacity)}
		}
	}
	return nil
}

// shapeCheck checks the trie's memory (TM1, spec/tokenbucket.md §6) when
// the run ended with a reclaim that overlapped no other operation and a
// sequential tail after it: no dead cell heads a chain (that reclaim
// unlinked every dead head, and a later kill, a reset's, unlinks its own
// at once), no word is frozen (every compaction it met, it finished),
// and, when no operation but peeks came after it, no inner node below the
// root holds at most one chain and no inner node (it compacted them).
// Any other run may leave dead heads to the next operation that meets
// them, and is not checked.
func (p *tbProgram) shapeCheck(r *tbRun) *Failure {
	w := p.words
	if p.remote != nil || w == nil || w.trie == nil || !r.solo {
		return nil
	}
	s := w.trie
	var bad string
	var visit func(node unsafe.Pointer, path []int)
	visit = func(node unsafe.Pointer, path []int) {
		chains, inner := 0, 0
		for j := range s.Fanout(len(path)) {
			_, child := s.Child(node, j)
			at := append(append([]int(nil), path...), j)
			switch {
			case bad != "" || child == nil:
			case w.isFrozen(child):
				bad = fmt.Sprintf("child word %s is frozen", w.pathLabel(at))
			case w.isInner(child):
				inner++
				visit(child, at)
			default:
				chains++
				if lo, _ := s.LoadState(child); lo == tbDeadLo {
					bad = fmt.Sprintf("the dead cell of %q heads the chain at %s", s.Key(child), w.pathLabel(at))
				}
			}
		}
		if bad == "" && r.last && len(path) > 0 && inner == 0 && chains <= 1 {
			bad = fmt.Sprintf("the inner node at %s holds %d chain(s) and no inner node: it was not compacted", w.pathLabel(path), chains)
		}
	}
	visit(s.Root(s.Trie()), nil)
	if bad == "" {
		return nil
	}
	return &Failure{Kind: KindInvariant, Invariant: "TM1", Thread: -1, Detail: fmt.Sprintf(
		"after a reclaim that overlapped no other operation, and a sequential tail: %s", bad)}
}

// tbDeadLo is the lo half of a dead cell's bucket word (impl/tokenbucket's
// deadLo).
const tbDeadLo = 1

// dump renders the tries' cells.
func (p *tbProgram) dump() string {
	w := p.words
	if w == nil || w.trie == nil {
		return ""
	}
	w.walk()
	var cells []string
	for _, t := range w.tries {
		cells = append(cells, p.cellsOf(w.trie.Root(t.p), 0, t.name)...)
	}
	sort.Strings(cells)
	return strings.Join(cells, " ")
}

// cellsOf renders the cells under node, an inner node at level.
func (p *tbProgram) cellsOf(node unsafe.Pointer, level int, trie string) []string {
	s := p.words.trie
	var out []string
	for j := range s.Fanout(level) {
		_, child := s.Child(node, j)
		child = p.words.thaw(child)
		switch {
		case child == nil:
		case p.words.isInner(child):
			out = append(out, p.cellsOf(child, level+1, trie)...)
		default:
			for c := child; c != nil && !p.words.isSealed(c); _, c = s.Next(c) {
				lo, hi := s.LoadState(c)
				out = append(out, fmt.Sprintf("%s/%q=%s", trie, s.Key(c), bucketWord([2]uint64{lo, hi})))
			}
		}
	}
	return out
}

func (p *tbProgram) tracer() tracer {
	if p.remote != nil {
		return remoteTracer{&tbTracer{p: p}, p.remote.Name}
	}
	return &tbTracer{p: p}
}

type tbTracer struct{ p *tbProgram }

// observe names the words of the structure as it grows, so a trie a
// reset_all replaced is still named after it is gone.
func (t *tbTracer) observe(c *controller, r *stepRec) {
	if t.p.words.trie != nil {
		t.p.words.walk()
	}
}

func (t *tbTracer) word(addr unsafe.Pointer) string {
	if t.p.waits && addr == rt.ClockWord() {
		return "the clock"
	}
	return t.p.words.name(addr)
}

func (t *tbTracer) value(addr unsafe.Pointer, v any) string {
	name := t.p.words.name(addr)
	if w, ok := v.(uint64); ok && strings.HasSuffix(name, ".floor") {
		if w == 0 {
			return "no floor"
		}
		return fmt.Sprintf("floor=%dms", int64(w^bucketPresent))
	}
	// Every other number is a half or the whole of a bucket word, the
	// table's only Pair: told by its type, not its name, so a cell's state
	// renders alike before the cell is published (when no walk names it).
	if !strings.HasSuffix(name, ".floor") {
		switch w := v.(type) {
		case [2]uint64:
			return bucketWord(w)
		case uint64: // the lo half
			if w == bucketDead {
				return "dead"
			}
			if w&bucketPresent == 0 {
				return "absent"
			}
			return fmt.Sprintf("tokens=%v", math.Float64frombits(w&^bucketPresent))
		case hiHalf:
			return fmt.Sprintf("last=%dms", int64(w))
		}
	}
	return t.p.words.value(v)
}

// bucketWord renders a bucket word as impl/tokenbucket lays it out: (0, 0)
// for an absent bucket, lo = 1 for a dead one, else the tokens' bits under a
// presence bit in lo and the timestamp in hi.
func bucketWord(w [2]uint64) string {
	if w[0] == bucketDead {
		return "dead"
	}
	if w[0]&bucketPresent == 0 {
		return "absent"
	}
	return fmt.Sprintf("{tokens=%v last=%dms}", math.Float64frombits(w[0]&^bucketPresent), int64(w[1]))
}

// bucketPresent is the presence bit of a bucket word's lo half, bucketDead
// the lo half of a dead bucket word; the floor word is biased by
// bucketPresent too.
const (
	bucketPresent = 1 << 63
	bucketDead    = 1
)

func (t *tbTracer) call(th, op int) string {
	if op == len(t.p.script.threads[th]) {
		return fmt.Sprintf("cancel the context of T%d's waits", t.p.script.cancels[th])
	}
	if t.p.script.isWait(th, op) {
		return waitText(t.p.script.threads[th][op])
	}
	return t.p.script.threads[th][op].String()
}

func (t *tbTracer) ret(th, op int) string {
	r := t.p.run
	if op == len(t.p.script.threads[th]) {
		return "cancelled"
	}
	if op >= len(r.out[th]) {
		return "?"
	}
	if err, ok := r.failed[[2]int{th, op}]; ok {
		return err
	}
	return r.out[th][op].Answer(t.p.script.threads[th][op].Kind)
}

func (t *tbTracer) setup() []string {
	var out []string
	r := t.p.run
	for i, in := range t.p.script.setup {
		ans := "?" // the setup failed before this operation answered
		if r != nil && i < len(r.setup) {
			ans = r.setup[i].Answer(in.Kind)
		}
		out = append(out, fmt.Sprintf("%s ⇒ %s", in, ans))
	}
	return out
}
