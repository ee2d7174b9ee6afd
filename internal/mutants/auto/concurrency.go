package auto

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"strings"
)

// The concurrency operators (`tollgate mutants --auto -concurrency`) are
// the mutation operators of the concurrency-mutation literature, adapted
// from Java's locks, volatile fields and java.util.concurrent.atomic to Go's
// atomics as impl/ reaches them through internal/seam (Pair, Pointer,
// Uint64, Bool: Load, LoadLo, LoadHi, Store, CompareAndSwap,
// CompareAndSwapLo, Add). The source is J. S. Bradbury, J. R. Cordy and
// J. Dingel, "Mutation Operators for Concurrent Java (J2SE 5.0)", Second
// Workshop on Mutation Analysis (Mutation 2006). Each operator here names
// the operator of theirs it adapts:
//
//   - cc-cas-split: a compare-and-swap made a load, a comparison and a
//     store, no longer one atomic step (EAN, "exchange atomic call with
//     non-atomic", which splits getAndSet and its kin into a get and a set).
//   - cc-swap: two adjacent statements of one function, each with an
//     atomic operation, swapped (ESP/ELPA, exchanging synchronization
//     operations; SHCR, shifting a critical region past its neighbour).
//   - cc-hoist-load: a statement that only loads atomically moved above the
//     atomic operation before it (SHCR/EXCR: the read leaves the region the
//     operation before it ordered it into).
//   - cc-drop-recheck: a load that re-reads a word already read in the
//     function replaced by the value read earlier (RCXC, removing a
//     concurrency-mechanism call; SKCR, shrinking the region a check
//     covers): the validation a lock-free algorithm makes before it acts.
//   - cc-plain-store: an atomic store, or a compare-and-swap's write, made
//     a plain store (RVK, removing volatile: the write is no longer a
//     synchronizing access). In the free-running build it is a real
//     non-atomic store (package active's Word and PairWords); in the
//     explorer's hooked copy the generator puts hooked.PlainStore before
//     it, as before every plain store to shared memory, so the explorer
//     sees a plain write (a switch point, and a write a race detector
//     orders by happens-before) where the atomic operation was.
//   - cc-one-attempt: a retry loop (a for with no condition whose body
//     compare-and-swaps) cut to one attempt: after the first failed pass it
//     returns what the loop's failure path returns, or breaks. (No Java
//     operator of theirs; the lock-free analogue of RFU/SKCR, a retry
//     being a lock-free algorithm's critical region.)
//   - cc-torn-load: a 128-bit load of a pair word made two 64-bit loads,
//     the low half then the high half, or the high half then the low (EAN
//     again: one atomic read exchanged for two, so a write between them
//     yields a word that never existed).
//   - cc-drop-epoch: a comparison of a generation or epoch in a condition
//     replaced by the constant that makes it pass (== by true, != by
//     false, an ordering by each): the ABA protection dropped (MSP/RSK in
//     spirit: the guard that keeps a stale actor out is gone).
//
// Each mutant that does not type-check is dropped. cc-swap and
// cc-hoist-load span two statements; their schema node is opaque (see
// Mutant.Opaque).
var ConcurrencyOperators = []string{
	"cc-cas-split", "cc-swap", "cc-hoist-load", "cc-drop-recheck",
	"cc-plain-store", "cc-one-attempt", "cc-drop-epoch", "cc-torn-load",
}

// OpSet names a set of operators: the classic ones (Operators) or the
// concurrency ones (ConcurrencyOperators).
type OpSet string

// The operator sets.
const (
	Classic     OpSet = "classic"
	Concurrency OpSet = "concurrency"
)

// Ops is the set's operators.
func (s OpSet) Ops() []string {
	if s == Concurrency {
		return ConcurrencyOperators
	}
	return Operators
}

// Has reports whether op belongs to the set ("" is Classic).
func (s OpSet) Has(op string) bool {
	for _, o := range s.Ops() {
		if o == op {
			return true
		}
	}
	return false
}

// seamCall is a call of a seam operation.
type seamCall struct {
	call   *ast.CallExpr
	recv   string // the receiver's text
	addr   string // its address's text (&recv, or recv when it is a pointer)
	method string
	kind   string // "Pair", "Pointer", "Uint64", "Bool"
	elem   string // the value type of a one-word atomic (uint64, bool, *T)
}

func (c seamCall) load() bool {
	return c.method == "Load" || c.method == "LoadLo" || c.method == "LoadHi"
}

// seamOp returns the seam operation x calls, if it calls one.
func (g *generator) seamOp(x ast.Expr) (seamCall, bool) {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		return seamCall{}, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return seamCall{}, false
	}
	s, ok := g.p.info.Selections[sel]
	if !ok || s.Kind() != types.MethodVal {
		return seamCall{}, false
	}
	var kind string
	switch seamKind(s.Recv()) {
	case "sync/atomic.Uint64":
		kind = "Uint64"
	case "sync/atomic.Bool":
		kind = "Bool"
	case "sync/atomic.Pointer":
		kind = "Pointer"
	case "internal/seam.Pair":
		kind = "Pair"
	default:
		return seamCall{}, false
	}
	switch sel.Sel.Name {
	case "Load", "LoadLo", "LoadHi", "Store", "CompareAndSwap", "CompareAndSwapLo", "Add":
	default:
		return seamCall{}, false
	}
	c := seamCall{call: call, recv: g.text(sel.X), method: sel.Sel.Name, kind: kind}
	c.addr = "&" + c.recv
	if tv, ok := g.p.info.Types[sel.X]; ok {
		if _, ptr := tv.Type.Underlying().(*types.Pointer); ptr {
			c.addr = c.recv
		}
	}
	if kind != "Pair" {
		if sig, ok := s.Type().(*types.Signature); ok {
			if load := sig; load.Results().Len() == 1 && c.method == "Load" {
				c.elem = types.TypeString(load.Results().At(0).Type(), g.qualifier)
			} else if sig.Params().Len() >= 1 {
				c.elem = types.TypeString(sig.Params().At(sig.Params().Len()-1).Type(), g.qualifier)
			}
		}
	}
	return c, true
}

// seamOps lists the seam operations inside n, not counting those inside a
// function literal.
func (g *generator) seamOps(n ast.Node) []seamCall {
	var out []seamCall
	ast.Inspect(n, func(x ast.Node) bool {
		if _, ok := x.(*ast.FuncLit); ok {
			return false
		}
		if e, ok := x.(ast.Expr); ok {
			if c, ok := g.seamOp(e); ok {
				out = append(out, c)
			}
		}
		return true
	})
	return out
}

// concurrency adds the concurrency operators' mutants of one function.
// exportPairInline has none: it is never called (var _ = exportPairInline;
// it only makes the export data carry seam.Pair's inline bodies), so every
// mutant of it would be equivalent by that reason alone.
func (g *generator) concurrency(fn *ast.FuncDecl) {
	if fn.Name.Name == "exportPairInline" {
		return
	}
	// Earlier single assignments from a load, by receiver and method, for
	// cc-drop-recheck: in source order.
	type read struct {
		key string
		lhs string
		end token.Pos
	}
	var reads []read
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if len(x.Lhs) == 1 && len(x.Rhs) == 1 {
				if c, ok := g.seamOp(x.Rhs[0]); ok && c.load() && c.kind+c.method != "PairLoad" {
					reads = append(reads, read{key: c.recv + "." + c.method, lhs: g.text(x.Lhs[0]), end: x.End()})
				}
			}
		case *ast.CallExpr:
			c, ok := g.seamOp(x)
			if !ok {
				return true
			}
			g.casSplit(c)
			g.tornLoad(c)
			if c.load() && c.kind+c.method != "PairLoad" {
				for i := len(reads) - 1; i >= 0; i-- {
					if r := reads[i]; r.key == c.recv+"."+c.method && r.end <= x.Pos() {
						g.add("cc-drop-recheck", x, x.Pos(), x.End(), r.lhs)
						break
					}
				}
			}
			if c.method == "CompareAndSwap" || c.method == "CompareAndSwapLo" {
				g.plainCAS(c)
			}
		case *ast.ExprStmt:
			if c, ok := g.seamOp(x.X); ok && c.method == "Store" {
				g.plainStore(x, c)
			}
		case *ast.BinaryExpr:
			g.dropEpoch(x)
		case *ast.BlockStmt:
			g.adjacent(x.List)
		case *ast.CaseClause:
			g.adjacent(x.Body)
		case *ast.ForStmt:
			g.oneAttempt(fn, x)
		}
		return true
	})
}

// casSplit: a compare-and-swap as a load, a comparison and a store.
func (g *generator) casSplit(c seamCall) {
	if c.method != "CompareAndSwap" && c.method != "CompareAndSwapLo" {
		return
	}
	a := g.args(c.call)
	r := c.recv
	var repl string
	switch {
	case c.kind == "Pair" && c.method == "CompareAndSwap" && len(a) == 4:
		repl = fmt.Sprintf("func() bool { if mLo, mHi := %s.Load(); mLo == %s && mHi == %s { %s.Store(%s, %s); return true }; return false }()", r, a[0], a[1], r, a[2], a[3])
	case c.kind == "Pair" && c.method == "CompareAndSwapLo" && len(a) == 2:
		repl = fmt.Sprintf("func() bool { if mLo, mHi := %s.Load(); mLo == %s { %s.Store(%s, mHi); return true }; return false }()", r, a[0], r, a[1])
	case c.kind != "Pair" && len(a) == 2:
		repl = fmt.Sprintf("func() bool { if %s.Load() == %s { %s.Store(%s); return true }; return false }()", r, a[0], r, a[1])
	default:
		return
	}
	g.add("cc-cas-split", c.call, c.call.Pos(), c.call.End(), repl)
}

// tornLoad: a pair's Load as two half loads, in either order; the result
// is the pair (lo, hi) as before.
func (g *generator) tornLoad(c seamCall) {
	if c.kind != "Pair" || c.method != "Load" || len(c.call.Args) != 0 {
		return
	}
	r := c.recv
	g.add("cc-torn-load", c.call, c.call.Pos(), c.call.End(), fmt.Sprintf("func() (uint64, uint64) { return %s.LoadLo(), %s.LoadHi() }()", r, r))
	g.add("cc-torn-load", c.call, c.call.Pos(), c.call.End(), fmt.Sprintf("func() (uint64, uint64) { mHi := %s.LoadHi(); return %s.LoadLo(), mHi }()", r, r))
}

func (g *generator) args(call *ast.CallExpr) []string {
	out := make([]string, len(call.Args))
	for i, a := range call.Args {
		out[i] = g.text(a)
	}
	return out
}

// plainWrite is the statement that writes the value plainly, as a store
// the generator of the explored copies marks (hooked.PlainStore).
func plainWrite(c seamCall, vals ...string) string {
	if c.kind == "Pair" {
		if len(vals) == 1 { // lo alone
			return fmt.Sprintf("automutActive.PairWords(%s)[0] = %s", c.addr, vals[0])
		}
		return fmt.Sprintf("*automutActive.PairWords(%s) = [2]uint64{%s, %s}", c.addr, vals[0], vals[1])
	}
	return fmt.Sprintf("*automutActive.Word[%s](%s) = %s", c.elem, c.addr, vals[0])
}

// plainStore: an atomic Store statement made a plain store.
func (g *generator) plainStore(s *ast.ExprStmt, c seamCall) {
	a := g.args(c.call)
	if (c.kind == "Pair" && len(a) != 2) || (c.kind != "Pair" && (len(a) != 1 || c.elem == "")) {
		return
	}
	g.add("cc-plain-store", s, s.Pos(), s.End(), plainWrite(c, a...))
}

// plainCAS: a compare-and-swap whose write is a plain store (the compare an
// atomic load).
func (g *generator) plainCAS(c seamCall) {
	a := g.args(c.call)
	r := c.recv
	var repl string
	switch {
	case c.kind == "Pair" && c.method == "CompareAndSwap" && len(a) == 4:
		repl = fmt.Sprintf("func() bool { if mLo, mHi := %s.Load(); mLo == %s && mHi == %s { %s; return true }; return false }()", r, a[0], a[1], plainWrite(c, a[2], a[3]))
	case c.kind == "Pair" && c.method == "CompareAndSwapLo" && len(a) == 2:
		repl = fmt.Sprintf("func() bool { if %s.LoadLo() == %s { %s; return true }; return false }()", r, a[0], plainWrite(c, a[1]))
	case c.kind != "Pair" && len(a) == 2 && c.elem != "":
		repl = fmt.Sprintf("func() bool { if %s.Load() == %s { %s; return true }; return false }()", r, a[0], plainWrite(c, a[1]))
	default:
		return
	}
	g.add("cc-plain-store", c.call, c.call.Pos(), c.call.End(), repl)
}

var epochWord = regexp.MustCompile(`(?i)\b(gen|maxgen|genof|epoch|epochof)\b`)

// dropEpoch: a comparison of a generation or epoch made the constant that
// lets it pass.
func (g *generator) dropEpoch(x *ast.BinaryExpr) {
	if isConst(g, x) || !(epochWord.MatchString(g.text(x.X)) || epochWord.MatchString(g.text(x.Y))) {
		return
	}
	var repls []string
	switch x.Op {
	case token.EQL:
		repls = []string{"true"}
	case token.NEQ:
		repls = []string{"false"}
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
		repls = []string{"true", "false"}
	default:
		return
	}
	for _, r := range repls {
		g.add("cc-drop-epoch", x, x.Pos(), x.End(), r)
	}
}

// adjacent adds cc-swap and cc-hoist-load for each pair of adjacent
// statements of a list that both hold an atomic operation.
func (g *generator) adjacent(list []ast.Stmt) {
	for i := 0; i+1 < len(list); i++ {
		s1, s2 := list[i], list[i+1]
		if !movable(s1) || !movable(s2) {
			continue
		}
		ops1, ops2 := g.seamOps(s1), g.seamOps(s2)
		if len(ops1) == 0 || len(ops2) == 0 {
			continue
		}
		loads := true
		for _, c := range ops2 {
			loads = loads && c.load()
		}
		_, isIf := s2.(*ast.IfStmt)
		op := "cc-swap"
		if loads && !isIf {
			op = "cc-hoist-load"
		}
		g.addGroup(op, s1, s2)
	}
}

// movable: a statement that may change places with its neighbour (not a
// declaration by var, a label, a return or a branch).
func movable(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.DeclStmt, *ast.LabeledStmt, *ast.ReturnStmt, *ast.BranchStmt, *ast.EmptyStmt:
		return false
	}
	return true
}

// addGroup adds the mutant that puts s2 before s1, with the opaque schema
// form: the names either declares by := are declared first (var), and the
// two statements assign them, so that both branches of the run-time choice
// leave them in scope.
func (g *generator) addGroup(op string, s1, s2 ast.Stmt) {
	var decl strings.Builder
	conv := func(s ast.Stmt) (string, bool) {
		text := g.text(s)
		as, ok := s.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE {
			return text, true
		}
		for _, l := range as.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok {
				return "", false
			}
			if obj := g.p.info.Defs[id]; obj != nil {
				fmt.Fprintf(&decl, "var %s %s; ", id.Name, types.TypeString(obj.Type(), g.qualifier))
			}
		}
		at := g.off(as.TokPos) - g.off(s.Pos())
		return text[:at] + "=" + text[at+2:], true
	}
	t1, ok1 := conv(s1)
	t2, ok2 := conv(s2)
	if !ok1 || !ok2 {
		return
	}
	g.add(op, s1, s1.Pos(), s2.End(), g.text(s2)+"\n"+g.text(s1))
	m := &g.out[len(g.out)-1]
	m.NodeEnd = g.off(s2.End())
	m.Opaque = true
	m.SchemaDecl = decl.String()
	m.SchemaOrig = t1 + "\n" + t2
	m.SchemaRepl = t2 + "\n" + t1
}

// oneAttempt: a retry loop cut to one attempt.
func (g *generator) oneAttempt(fn *ast.FuncDecl, f *ast.ForStmt) {
	if f.Init != nil || f.Cond != nil || f.Post != nil || len(f.Body.List) == 0 {
		return
	}
	cas := false
	var casIfs []*ast.IfStmt
	var rets []*ast.ReturnStmt
	inCAS := func(n ast.Node) bool {
		for _, s := range casIfs {
			if n.Pos() >= s.Body.Pos() && n.End() <= s.Body.End() {
				return true
			}
		}
		return false
	}
	ast.Inspect(f.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt:
			return x == nil
		case *ast.IfStmt:
			for _, c := range g.seamOps(x.Cond) {
				if c.method == "CompareAndSwap" || c.method == "CompareAndSwapLo" {
					casIfs = append(casIfs, x)
				}
			}
		case *ast.ReturnStmt:
			rets = append(rets, x)
		case *ast.CallExpr:
			if c, ok := g.seamOp(x); ok && (c.method == "CompareAndSwap" || c.method == "CompareAndSwapLo") {
				cas = true
			}
		}
		return true
	})
	if !cas {
		return
	}
	exit := "break"
	for _, r := range rets {
		if !inCAS(r) {
			exit = g.text(r)
			break
		}
	}
	last := f.Body.List[len(f.Body.List)-1]
	switch last.(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return
	}
	g.add("cc-one-attempt", last, last.End(), last.End(), "\n"+exit)
}

// seamKind names the atomic type t is (or points to), aliases resolved:
// "sync/atomic.Uint64", "sync/atomic.Pointer" (any instance), or
// "internal/seam.Pair"; else "".
func seamKind(t types.Type) string {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return ""
	}
	path := n.Obj().Pkg().Path()
	if strings.HasSuffix(path, "/internal/seam") {
		path = "internal/seam"
	}
	return path + "." + n.Obj().Name()
}
