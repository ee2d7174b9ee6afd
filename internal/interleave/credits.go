package interleave

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/anishathalye/porcupine"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/layout"
	explored "github.com/tollgate/tollgate/internal/mutants/explored/credits"
	"github.com/tollgate/tollgate/internal/seam/hooked"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// newCrTable builds the explored credit table of a fault: the real table
// files on internal/seam/hooked for fault.None, a mutant's otherwise.
var newCrTable = func(f fault.Fault) sut.CrTable[string] { return sut.NewHookedCrTable[string](f) }

// crProgram explores a credit-table scenario.
type crProgram struct {
	sc      Scenario
	script  *crScript
	fault   fault.Fault
	cache   *verdicts
	words   *words
	checked int
	// observed are the offsets of the words whose writes change the
	// table's snapshot: after each such write the step observer records
	// one.
	observed map[uintptr]bool
	dir      string
	fname    string
	run      *crRun
	remote   *Remote // nil: the hooked in-memory table
}

// crRun is one run's instance and what it recorded.
type crRun struct {
	table    sut.CrTable[string]
	ad       *sut.Credits[string]
	backend  linearizability.CrBackend
	setupIn  []model.CrInput[string]
	setupOut []model.CrOutput[string]
	in       [][]model.CrInput[string] // per thread, per step (skipped: zero)
	out      [][]model.CrOutput[string]
	started  [][]int // per thread: the step index of each operation run
	ops      []linearizability.CrOp
	issued   map[uint64]credits.Token // model epoch → the table's token (apply)
	// obs are the snapshots the step observer took between steps (Kind
	// snapshot, client threads+2); they are checked with the history but
	// are not part of it (linearizability.CrHistory refuses snapshots,
	// which are atomic only when nothing runs, as here).
	obs []linearizability.CrOp
	// beyondCap is set when a reserve answered a token whose generation
	// is above the run's lowered generation cap (C3).
	beyondCap string
	// closed is what the table's Closed answered with each snapshot of
	// obs, then with the final one (closedCheck).
	closed []bool
}

// reset empties the run's records, keeping their storage.
func (r *crRun) reset(tab sut.CrTable[string], ad *sut.Credits[string]) {
	r.table, r.ad = tab, ad
	r.setupIn, r.setupOut, r.ops, r.obs, r.closed = r.setupIn[:0], r.setupOut[:0], r.ops[:0], r.obs[:0], r.closed[:0]
	r.beyondCap = ""
	for t := range r.in {
		r.in[t], r.out[t], r.started[t] = r.in[t][:0], r.out[t][:0], r.started[t][:0]
	}
}

func newCrProgram(s Scenario, f fault.Fault) *crProgram {
	return &crProgram{sc: s, script: s.cr, fault: f, cache: newVerdicts()}
}

func (p *crProgram) threads() int { return len(p.script.threads) }

func (p *crProgram) histories() int { return p.checked }

func (p *crProgram) writeFiles(dir, name string) { p.dir, p.fname = dir, name }

// liveOf is the holder-liveness effect of an operation.
func liveOf(k model.CrKind) int8 {
	switch k {
	case model.CrExit:
		return liveWrite
	case model.CrSweep:
		return liveRead
	}
	return liveNone
}

// recorded reports whether an operation goes into the history: snapshot is
// not an atomic scan (spec/credits.md §5) and is left out. enqueued is not
// atomic either, but its promise is per slot, and the history's checks
// read it so (linearizability.CheckListings, and porcupine's reads of its
// slots).
func recorded(k model.CrKind) bool { return k != model.CrSnapshot }

func (p *crProgram) begin(c *controller) []func() {
	if p.remote != nil {
		return p.beginRemote(c)
	}
	c.bounds = p.sc.bounds
	tab := newCrTable(p.fault)
	lay := tableLayout(tab)
	if p.words == nil {
		p.words = newWords(lay)
	}
	p.words.reset(lay)
	if p.observed == nil {
		p.observed = map[uintptr]bool{}
		for off, name := range p.words.names {
			if strings.HasPrefix(name, "slots[") || name == "closed" {
				p.observed[off] = true
			}
		}
	}
	c.seen = func(a hooked.Access) bool {
		return p.observed[uintptr(a.Word)-uintptr(p.words.base)]
	}
	r := p.newRun()
	it := &issuing{CrTable: tab}
	ad := &sut.Credits[string]{Table: it}
	if p.fault == fault.None {
		// The explored table reads a holder's flag through its view
		// (internal/mutants/explored/credits/holder.go): an exit goes
		// through it too, so the race detector sees both.
		ad.Exit = explored.ExitHolder
	}
	r.reset(tab, ad)
	clear(r.issued)
	if r.issued == nil {
		r.issued = map[uint64]credits.Token{}
	}
	cap, capped := p.sc.bounds["maxGen"]
	r.backend = linearizability.Local(func(in model.CrInput[string]) model.CrOutput[string] {
		out := r.apply(it, in)
		if capped && in.Kind == model.CrReserve && out.Result == model.OK && r.beyondCap == "" {
			if gen, _ := credits.Generation(it.last.Slot, it.last.Epoch); gen > cap {
				r.beyondCap = fmt.Sprintf("a reserve answered slot %d's generation %d (epoch %d), beyond the last generation a slot hands out, which the run lowered to %d: past it a slot must refuse, loudly, rather than hand out an epoch no transition accepts", it.last.Slot, gen, it.last.Epoch, cap)
			}
		}
		return out
	})
	return p.scripts(c, r)
}

// issuing is a table that remembers the last token its Reserve returned.
type issuing struct {
	sut.CrTable[string]
	last credits.Token
}

func (t *issuing) Reserve(h *credits.Holder, c credits.Class) (credits.Token, credits.Result) {
	tok, res := t.CrTable.Reserve(h, c)
	t.last = tok
	return tok, res
}

// apply is the adapter's Apply, but for an input whose token Forged made:
// that one goes to the table with the forged table token (forge of the
// token the table issued for the model epoch forged), its answer in model
// form. The adapter's epochs are its own; issued keeps, for every model
// epoch a reserve answered, the table's token, recorded in the step of the
// reserve's return (no switch point lies between the table's answer and
// the map).
func (r *crRun) apply(it *issuing, in model.CrInput[string]) model.CrOutput[string] {
	f, me, forged := forgedOf(in.Token.Epoch)
	if !forged {
		out := r.ad.Apply(in)
		if in.Kind == model.CrReserve && out.Result == model.OK {
			r.issued[out.Token.Epoch] = it.last
		}
		return out
	}
	base, ok := r.issued[me]
	if !ok || base.Slot != in.Token.Slot {
		panic(fmt.Sprintf("explore: a forged token of %s: the table issued no token for model epoch %d", in.Token, me))
	}
	tok := forge(f, base)
	var out model.CrOutput[string]
	switch in.Kind {
	case model.CrEnqueue:
		out.Result = sut.Result(r.table.EnqueueAt(in.NowMs, r.ad.Holder(in.Holder), tok, in.Payload))
	case model.CrTake:
		out.Payload, out.OK = r.table.Take(tok)
	case model.CrFinish:
		out.OK = r.table.Finish(tok)
	case model.CrRelease:
		out.OK = r.table.Release(r.ad.Holder(in.Holder), tok)
	default:
		panic(fmt.Sprintf("explore: a forged token in a %s", in.Kind))
	}
	return out
}

// beginRemote starts a run on a fresh table of the remote backend. The
// table's snapshot is observed after every step that may have written.
func (p *crProgram) beginRemote(c *controller) []func() {
	b, err := p.remote.Credits()
	if err != nil {
		panic(fmt.Sprintf("explore: a fresh %s table: %v", p.remote.Name, err))
	}
	c.seen = func(a hooked.Access) bool { return a.Wrote() }
	r := p.newRun()
	r.reset(nil, nil)
	r.backend = b
	return p.scripts(c, r)
}

// newRun returns the program's run record, made on first use.
func (p *crProgram) newRun() *crRun {
	if p.run == nil {
		n := p.threads()
		p.run = &crRun{in: make([][]model.CrInput[string], n), out: make([][]model.CrOutput[string], n), started: make([][]int, n)}
	}
	return p.run
}

// scripts runs the setup on r (in direct mode) and returns the threads'
// bodies.
func (p *crProgram) scripts(c *controller, r *crRun) []func() {
	n := p.threads()
	for _, st := range p.script.setup {
		in, ok := st(CrEnv{Setup: r.setupOut, Mine: r.setupOut})
		if !ok {
			r.setupIn, r.setupOut = append(r.setupIn, model.CrInput[string]{}), append(r.setupOut, model.CrOutput[string]{})
			continue
		}
		var out model.CrOutput[string]
		call, ret := c.operation(liveNone, func() { out = p.do(n, in) })
		r.setupIn, r.setupOut = append(r.setupIn, in), append(r.setupOut, out)
		if recorded(in.Kind) {
			r.ops = append(r.ops, linearizability.CrOp{Client: n, Input: in, Output: out, Call: call, Return: ret})
		}
	}
	bodies := make([]func(), n)
	for t := range bodies {
		bodies[t] = func() {
			for k, st := range p.script.threads[t] {
				in, ok := st(CrEnv{Setup: r.setupOut, Mine: r.out[t], Threads: r.out})
				if !ok {
					r.in[t], r.out[t] = append(r.in[t], model.CrInput[string]{}), append(r.out[t], model.CrOutput[string]{})
					continue
				}
				r.in[t] = append(r.in[t], in)
				r.started[t] = append(r.started[t], k)
				var out model.CrOutput[string]
				call, ret := c.operation(liveOf(in.Kind), func() { out = p.do(t, in) })
				r.out[t] = append(r.out[t], out)
				if recorded(in.Kind) {
					r.ops = append(r.ops, linearizability.CrOp{Client: t, Input: in, Output: out, Call: call, Return: ret})
				}
			}
		}
	}
	return bodies
}

// afterStep records the table's snapshot between two steps: nothing runs
// while it is taken, so it is atomic, and every linearization of the run
// must agree with it. This pins down the instants of the history: an
// exhausted answer must be explained at an instant where the table really
// had every slot of the class in use, which the history alone cannot tell
// (spec/explore.md, "Observing between steps").
func (p *crProgram) afterStep(c *controller) {
	var out model.CrOutput[string]
	in := model.CrInput[string]{Kind: model.CrSnapshot}
	call, ret := c.observe(func() {
		out = p.do(p.threads()+2, in)
		p.observeClosed()
	})
	p.run.obs = append(p.run.obs, linearizability.CrOp{Client: p.threads() + 2, Input: in, Output: out, Call: call, Return: ret})
	if c.tracing {
		c.rec.note = "snapshot: " + compactSnapshot(out.Snap)
		if r := p.run; len(r.closed) > 0 && r.closed[len(r.closed)-1] {
			c.rec.note += "; Closed() true"
		}
	}
}

// observeClosed records what the table's Closed answers, with a snapshot
// taken at the same instant (nothing runs between them). A remote table
// has no Closed to ask.
func (p *crProgram) observeClosed() {
	if r := p.run; r.table != nil {
		r.closed = append(r.closed, r.table.Closed())
	}
}

// closedCheck holds the table's Closed to the model's closed state (C11)
// at every instant it was asked: each answer was read with a snapshot,
// and once porcupine has agreed every snapshot with a linearization of
// the history (verdict), the snapshot is the model's at that instant. The
// model's snapshot is all zero exactly when its table is closed (open, it
// counts each of the 32 rows once), so Closed must answer true with a zero
// snapshot and false with any other.
func (p *crProgram) closedCheck(r *crRun, final model.CrOutput[string]) *Failure {
	if len(r.closed) == 0 {
		return nil // a remote table
	}
	snaps := make([]model.Snapshot, 0, len(r.obs)+1)
	for _, o := range r.obs {
		snaps = append(snaps, o.Output.Snap)
	}
	snaps = append(snaps, final.Snap)
	for i, closed := range r.closed {
		want := snaps[i] == model.Snapshot{}
		if closed == want {
			continue
		}
		when := fmt.Sprintf("between steps (observation %d of %d)", i+1, len(r.obs))
		if i == len(r.obs) {
			when = "once every thread was done"
		}
		state := "open"
		if want {
			state = "closed"
		}
		return &Failure{Kind: KindInvariant, Invariant: "C11", Thread: -1, Detail: fmt.Sprintf(
			"Closed() answered %v %s, but the model's table is %s there: the snapshot read with it (%s) agrees with a linearization of the history, and the model's snapshot is all zero exactly when its table is closed",
			closed, when, state, compactSnapshot(snaps[i]))}
	}
	return nil
}

// do applies one input through the linearizability backend.
func (p *crProgram) do(client int, in model.CrInput[string]) model.CrOutput[string] {
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

func (p *crProgram) end(c *controller, outcome bool) (*Failure, string) {
	r := p.run
	n := p.threads()
	var snap, enq model.CrOutput[string]
	c.quiet(func() {
		snap = p.do(n+1, model.CrInput[string]{Kind: model.CrSnapshot})
		p.observeClosed()
		enq = p.do(n+1, model.CrInput[string]{Kind: model.CrEnqueued})
	})
	final := []model.CrOutput[string]{snap, enq}
	if r.beyondCap != "" {
		return &Failure{Kind: KindInvariant, Invariant: "C3", Thread: -1, Detail: r.beyondCap}, ""
	}
	f := p.listings(r)
	if f == nil {
		f = p.verdict(r, final)
	}
	if f == nil {
		f = p.closedCheck(r, snap)
	}
	if !outcome {
		return f, ""
	}
	return f, p.outcome(r, final)
}

// documentedPanic implements panicJudge. With the generation cap lowered
// (edges.go), Reserve's documented answer at the cap is a panic that
// changes nothing (C3): it is the run's end, not its failure, when the
// thread's operation is a reserve, the panic names the lowered cap, and
// some reserve of the run was answered the slot's last generation.
func (p *crProgram) documentedPanic(_ *controller, t int, v any) (*Failure, bool) {
	cap, capped := p.sc.bounds["maxGen"]
	msg, ok := v.(string)
	if !capped || !ok || t >= p.threads() {
		return nil, false
	}
	var slot int
	var k uint64
	if _, err := fmt.Sscanf(msg, "credits: slot %d has handed out all %d generations", &slot, &k); err != nil {
		return nil, false
	}
	r := p.run
	if n := len(r.in[t]); n == 0 || r.in[t][n-1].Kind != model.CrReserve {
		return &Failure{Kind: KindInvariant, Invariant: "C3", Thread: t, Detail: fmt.Sprintf("T%d panicked at the generation cap outside a reserve: %s", t, msg)}, true
	}
	if k != cap {
		return &Failure{Kind: KindInvariant, Invariant: "C3", Thread: t, Detail: fmt.Sprintf("T%d's reserve panicked at a cap of %d generations, not the run's %d: %s", t, k, cap, msg)}, true
	}
	if r.beyondCap != "" {
		return &Failure{Kind: KindInvariant, Invariant: "C3", Thread: -1, Detail: r.beyondCap}, true
	}
	for _, tok := range r.issued {
		if gen, _ := credits.Generation(tok.Slot, tok.Epoch); tok.Slot == slot && gen == cap {
			return nil, true
		}
	}
	return &Failure{Kind: KindInvariant, Invariant: "C3", Thread: t, Detail: fmt.Sprintf("T%d's reserve panicked at slot %d's generation cap of %d, but no reserve was answered that slot's generation %d: %s", t, slot, cap, cap, msg)}, true
}

// listings checks every enqueued listing a thread made against the rule of
// C13 (model.CheckListing through linearizability.CheckListings): each
// entry a row of an enqueue that answered ok and whose row no take,
// finish, close or later reserve had ended before the listing began, and
// no row left out that was enqueued throughout the call. A listing is not
// one atomic step; porcupine then checks its slots' reads against the
// linearization (verdict).
func (p *crProgram) listings(r *crRun) *Failure {
	v := linearizability.CheckListings(linearizability.CrHistory{Ops: r.ops})
	if v == nil {
		return nil
	}
	op := r.ops[v.Index]
	who := fmt.Sprintf("T%d's", op.Client)
	if op.Client >= p.threads() {
		who = "the setup's"
	}
	return &Failure{Kind: KindInvariant, Invariant: v.Err.Invariant, Thread: -1, Detail: fmt.Sprintf(
		"%s enqueued listing: %s", who, v.Err.Detail)}
}

// verdict checks the run's history, from the cache when it was seen.
func (p *crProgram) verdict(r *crRun, final []model.CrOutput[string]) *Failure {
	report := p.dir != ""
	p.cache.keyb = crKey(&p.cache.canon, p.cache.keyb, r.ops, r.obs, final)
	if !report {
		if f, ok := p.cache.m[string(p.cache.keyb)]; ok {
			return f.copy()
		}
	}
	key := string(p.cache.keyb)
	p.checked++
	h := linearizability.CrHistory{Workload: p.sc.Name, Mutant: p.fault.String(), Ops: r.ops}
	if h.Mutant == "none" {
		h.Mutant = ""
	}
	// The common case, a passing history, costs one porcupine search: the
	// history with the observations added. A linearization of it is one of
	// the history alone, so CheckCredits would pass too (CheckEpochs, its
	// other half, runs here as well; the ends of the sweeps, where no row a
	// sweep owes may be left reserved, C17, are operations of the history).
	// Anything else goes through CheckCredits to say what failed (C16, C3,
	// C17) and to write the files.
	var f *Failure
	if h.Validate() == nil && linearizability.CheckEpochs(h) == nil &&
		porcupine.CheckOperations(linearizability.CreditsModel(), p.extended(h, r.obs, final)) {
		f = nil
	} else {
		f = p.classify(h, r.obs, final)
	}
	if !report {
		p.cache.m[key] = f
	}
	return f.copy()
}

// classify checks a history that failed with CheckCredits, then with the
// observations, and says which failed.
func (p *crProgram) classify(h linearizability.CrHistory, obs []linearizability.CrOp, final []model.CrOutput[string]) *Failure {
	opt := linearizability.Options{Dir: p.dir, Name: p.fname}
	rep, err := linearizability.CheckCredits(h, opt)
	switch {
	case err != nil:
		return &Failure{Kind: KindLinearizability, Thread: -1, Detail: "the history cannot be checked: " + err.Error()}
	case rep.Result != linearizability.Ok:
		return &Failure{Kind: KindLinearizability, Thread: -1, Invariant: rep.Invariant, Detail: rep.Detail,
			HTMLPath: rep.HTMLPath, JSONPath: rep.JSONPath}
	}
	f := p.finalCheck(h, obs, final)
	if f != nil && p.dir != "" && f.HTMLPath == "" {
		opt.AlwaysWrite = true
		if rep, err := linearizability.CheckCredits(h, opt); err == nil {
			f.HTMLPath, f.JSONPath = rep.HTMLPath, rep.JSONPath
		}
	}
	return f
}

// extended is the history's porcupine operations followed by the
// snapshots taken between steps and the two final observations.
func (p *crProgram) extended(h linearizability.CrHistory, obs []linearizability.CrOp, final []model.CrOutput[string]) []porcupine.Operation {
	ops := h.Operations()
	for _, o := range obs {
		ops = append(ops, porcupine.Operation{ClientId: o.Client, Call: o.Call, Return: o.Return,
			Input:  linearizability.CrInput{Op: o.Input},
			Output: linearizability.CrOutcome{Output: o.Output}})
	}
	var end int64
	for _, op := range ops {
		end = max(end, op.Return)
	}
	for i, o := range final {
		kind := model.CrSnapshot
		if i == 1 {
			kind = model.CrEnqueued
		}
		ops = append(ops, porcupine.Operation{ClientId: p.threads() + 1, Call: end + 1 + 2*int64(i), Return: end + 2 + 2*int64(i),
			Input:  linearizability.CrInput{Op: model.CrInput[string]{Kind: kind}},
			Output: linearizability.CrOutcome{Output: o}})
	}
	return ops
}

// finalCheck asks the porcupine model whether some linearization of the
// history ends in a state whose snapshot and enqueued rows are what the
// table shows once every thread is done (C13, C14 and the rows themselves
// through the model's Snapshot and Enqueued). The two observations are
// operations after the whole history: at that point no operation is in
// flight, so the scans are atomic.
func (p *crProgram) finalCheck(h linearizability.CrHistory, obs []linearizability.CrOp, final []model.CrOutput[string]) *Failure {
	ops := p.extended(h, obs, final)
	m := linearizability.CreditsModel()
	if porcupine.CheckOperations(m, ops) {
		return nil
	}
	f := &Failure{Kind: KindInvariant, Thread: -1, Invariant: "C16"}
	if !porcupine.CheckOperations(m, append(h.Operations(), ops[len(ops)-2:]...)) {
		f.Detail = fmt.Sprintf("the history is linearizable, but no linearization ends in the state the table shows afterwards: snapshot %s, enqueued %s",
			final[0].Answer(model.CrSnapshot), final[1].Answer(model.CrEnqueued))
	} else {
		f.Detail = fmt.Sprintf("the history is linearizable, but no linearization agrees with the %d snapshots of the table taken between steps", len(obs))
		if i, ok := p.culprit(h, obs, final); ok {
			op := h.Ops[i]
			f.Detail += fmt.Sprintf(": T%d's %s ⇒ %s holds at no instant the table was in (without it, the rest agrees)",
				op.Client, op.Input, op.Output.Answer(op.Input.Kind))
			if op.Input.Kind == model.CrReserve && op.Output.Result == model.Exhausted {
				f.Invariant = "C2"
			}
		}
		if p.dir != "" {
			_, info := porcupine.CheckOperationsVerbose(m, ops, 0)
			path := filepath.Join(p.dir, p.fname+"-observed.html")
			if os.MkdirAll(p.dir, 0o755) == nil && porcupine.VisualizePath(m, info, path) == nil {
				f.HTMLPath = path
			}
		}
	}
	return f
}

// culprit finds the one operation of the history without which the rest
// agrees with the observations, if there is exactly one.
func (p *crProgram) culprit(h linearizability.CrHistory, obs []linearizability.CrOp, final []model.CrOutput[string]) (int, bool) {
	found, n := -1, 0
	for i := range h.Ops {
		if h.Ops[i].Client >= p.threads() {
			continue // setup
		}
		rest := linearizability.CrHistory{Ops: append(append([]linearizability.CrOp(nil), h.Ops[:i]...), h.Ops[i+1:]...)}
		if porcupine.CheckOperations(linearizability.CreditsModel(), p.extended(rest, obs, final)) {
			found, n = i, n+1
		}
	}
	return found, n == 1
}

// outcome is every thread's answers and the final table.
func (p *crProgram) outcome(r *crRun, final []model.CrOutput[string]) string {
	var b strings.Builder
	for t := range r.out {
		fmt.Fprintf(&b, "T%d:", t)
		for k, o := range r.out[t] {
			fmt.Fprintf(&b, " %s", o.Answer(r.in[t][k].Kind))
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "snapshot %s; enqueued %s; rows", final[0].Answer(model.CrSnapshot), final[1].Answer(model.CrEnqueued))
	b.WriteString(p.dump())
	return b.String()
}

// dump renders every word of the table.
func (p *crProgram) dump() string {
	if p.remote != nil {
		return ""
	}
	var b strings.Builder
	tr := &crTracer{p: p}
	ws := tableLayout(p.run.table).Words()
	slices.SortFunc(ws, func(a, b layout.Word) int { return cmp.Compare(uintptr(a.Addr), uintptr(b.Addr)) })
	for _, w := range ws {
		fmt.Fprintf(&b, " %s=%s", w.Name, tr.value(w.Addr, w.Load()))
	}
	return b.String()
}

// holderNames names the holders of the run by their model ids, by pointer
// (for holder words) and by serial (for slot words' hi halves).
func (p *crProgram) holderNames() (byPtr func(unsafe.Pointer) string, bySerial map[uint64]string) {
	r := p.run
	names := map[unsafe.Pointer]string{}
	bySerial = map[uint64]string{}
	for _, ins := range append([][]model.CrInput[string]{r.setupIn}, r.in...) {
		for _, in := range ins {
			if in.Holder != 0 {
				h := r.ad.Holder(in.Holder)
				names[unsafe.Pointer(h)], bySerial[h.Serial()] = in.Holder.String(), in.Holder.String()
			}
		}
	}
	return func(h unsafe.Pointer) string {
		if n, ok := names[h]; ok {
			return n
		}
		if h == nil {
			return "nil"
		}
		return fmt.Sprintf("holder %p", h)
	}, bySerial
}

func (p *crProgram) tracer() tracer {
	if p.remote != nil {
		return remoteTracer{&crTracer{p: p}, p.remote.Name}
	}
	return &crTracer{p: p}
}

// slotLo renders the lo half of a slot word as impl/credits lays it out:
// two state bits under the generation.
func slotLo(lo uint64) string {
	state := [...]string{"free", "reserved", "enqueued", "processing"}[lo&3]
	return fmt.Sprintf("%s g%d", state, lo>>2)
}

// serialName names the holder whose serial a slot word's hi half holds by
// its model id, so that traces do not depend on how many holders the
// process made before.
func (t *crTracer) serialName(serial uint64) string {
	if serial == 0 {
		return "no holder"
	}
	if n, ok := t.serials[serial]; ok {
		return n
	}
	return "an earlier holder"
}

type crTracer struct {
	p       *crProgram
	holder  func(unsafe.Pointer) string
	serials map[uint64]string
}

func (t *crTracer) observe(c *controller, r *stepRec) {}

func (t *crTracer) word(addr unsafe.Pointer) string { return t.p.words.name(addr) }

func (t *crTracer) value(addr unsafe.Pointer, v any) string {
	// Named afresh each time: a step is rendered when it runs, and the
	// holders of operations not yet started are not known yet.
	t.holder, t.serials = t.p.holderNames()
	if strings.HasSuffix(t.p.words.name(addr), ".holder") {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
			return t.holder(rv.UnsafePointer())
		}
	}
	if name := t.p.words.name(addr); strings.HasSuffix(name, ".box") {
		t.p.words.noteBox(name, v)
	}
	if strings.HasSuffix(t.p.words.name(addr), ".word") {
		switch w := v.(type) {
		case [2]uint64:
			return fmt.Sprintf("{%s %s}", slotLo(w[0]), t.serialName(w[1]))
		case uint64:
			return slotLo(w)
		case hiHalf:
			return t.serialName(uint64(w))
		}
	}
	return t.p.words.value(v)
}

func (t *crTracer) call(th, op int) string {
	r := t.p.run
	k := r.started[th][op]
	return r.in[th][k].String()
}

func (t *crTracer) ret(th, op int) string {
	r := t.p.run
	k := r.started[th][op]
	if k >= len(r.out[th]) {
		return "?"
	}
	return r.out[th][k].Answer(r.in[th][k].Kind)
}

func (t *crTracer) setup() []string {
	r := t.p.run
	var out []string
	for i, in := range r.setupIn {
		if in.Kind == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s ⇒ %s", in, r.setupOut[i].Answer(in.Kind)))
	}
	return out
}

// compactSnapshot renders a snapshot for a trace: each class's non-zero
// counts.
func compactSnapshot(s model.Snapshot) string {
	class := func(name string, c model.Counts) string {
		var parts []string
		for _, f := range []struct {
			n    int
			what string
		}{{c.Free, "free"}, {c.Reserved, "reserved"}, {c.Enqueued, "enqueued"}, {c.Processing, "processing"}} {
			if f.n != 0 {
				parts = append(parts, fmt.Sprintf("%d %s", f.n, f.what))
			}
		}
		if len(parts) == 0 {
			return name + " all zero"
		}
		return name + " " + strings.Join(parts, ", ")
	}
	return class("general", s.General) + "; " + class("internal", s.Internal)
}
