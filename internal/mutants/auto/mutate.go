package auto

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tollgate/tollgate/internal/exportdata"
)

// A Mutant is one small change to one source file: the bytes [Start, End)
// of File replaced by Repl.
type Mutant struct {
	File  string // slash-separated, relative to the module root
	Func  string // the enclosing function ("Table.TakeAt", "check"), or "" at file level
	Op    string // the operator's name (see Operators)
	Line  int
	Col   int
	Start int
	End   int
	Orig  string // the source text replaced
	Repl  string // its replacement
	// N tells apart mutants of one function with the same operator, text
	// and replacement: the N-th such site in source order, from 0.
	N int

	// The node the mutation sits in, for the schema build (schema.go):
	// [NodeStart, NodeEnd) is a statement (Stmt) or an expression of type
	// Type, which the build wraps so the mutation is made only when this
	// mutant is the active one.
	NodeStart, NodeEnd int
	Stmt               bool
	Type               string
	// HeaderX, for an x++, x-- or x op= y in a loop header, is x: the
	// schema writes the statement as x = <HeaderOrig or HeaderMut>.
	HeaderX, HeaderOrig, HeaderMut string
	// Fixed is set when the node cannot be wrapped (a for loop's post
	// statement): the mutant is run from its own overlay only.
	Fixed bool
	// Opaque is set for a mutant whose node is two statements (cc-swap,
	// cc-hoist-load): the schema writes SchemaDecl (a var for each name
	// the statements declare by :=) and then the run-time choice between
	// SchemaRepl and SchemaOrig, the mutated and original statements with
	// := made =. Its original branch holds no other mutant's choice, so a
	// campaign judges it in a round of its own with the mutants whose nodes
	// overlap its node (Rounds).
	Opaque                             bool
	SchemaDecl, SchemaOrig, SchemaRepl string
}

// ID names the mutant independently of line numbers, so that the list of
// equivalent mutants survives edits elsewhere in the file:
//
//	impl/tokenbucket/tokenbucket.go Table.RetryAfterAt boundary `c >= 1` → `c > 1` #0
func (m Mutant) ID() string { return fmt.Sprintf("%s #%d", m.Stem(), m.N) }

// Stem is the mutant's ID without its number: what the mutants of one
// file, function and operator that make the same change share.
func (m Mutant) Stem() string {
	return fmt.Sprintf("%s %s %s `%s` → `%s`", m.File, orDash(m.Func), m.Op, oneLine(m.Orig), oneLine(m.Repl))
}

// Where is the mutant's position, file:line:col.
func (m Mutant) Where() string { return fmt.Sprintf("%s:%d:%d", m.File, m.Line, m.Col) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine collapses whitespace runs, so a statement over several lines
// reads on one.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = strings.TrimSpace(s[:60]) + " … " + strings.TrimSpace(s[len(s)-25:])
	}
	return s
}

// Apply returns src with the mutation made.
func (m Mutant) Apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.Repl))
	out = append(out, src[:m.Start]...)
	out = append(out, m.Repl...)
	return append(out, src[m.End:]...)
}

// Operators are the mutation operators, in the order Generate tries them.
var Operators = []string{
	"arith",         // + - * / % swapped (numeric operands only), and op= forms
	"bitwise",       // & | ^ &^ << >> swapped, and op= forms
	"boundary",      // < ↔ <=, > ↔ >=
	"negate",        // == ↔ !=, < ↔ >=, > ↔ <=; !x → x
	"logical",       // && ↔ ||
	"incdec",        // ++ ↔ --
	"sign",          // -x → x
	"remove",        // a statement removed: a call, an assignment, ++/--, break/continue
	"cas-store",     // CompareAndSwap(old, new) → Store(new); true
	"cas-loadstore", // CompareAndSwap(old, new) → if Load() == old { Store(new); true }
	"conversion",    // T(x) → x where x already has the numeric type T (the fused multiply-add hazard)
}

// Package is one package's files to mutate and the type information that
// filters out mutants that do not compile.
type Package struct {
	Dir   string   // slash-separated, relative to the module root
	Files []string // the non-test Go files of the default build, slash paths
	root  string
	fset  *token.FileSet
	imp   types.Importer
	mod   string // the module path
	srcs  map[string][]byte
	asts  map[string]*ast.File
	info  *types.Info
	tpkg  *types.Package
}

// LoadPackage parses and type-checks the package in dir (relative to root)
// for the default build context.
func LoadPackage(root, dir string) (*Package, error) {
	bp, err := build.Default.ImportDir(filepath.Join(root, filepath.FromSlash(dir)), 0)
	if err != nil {
		return nil, err
	}
	p := &Package{Dir: dir, root: root, fset: token.NewFileSet(), srcs: map[string][]byte{}, asts: map[string]*ast.File{}}
	if p.mod, err = modulePath(root); err != nil {
		return nil, err
	}
	exports, err := exportFiles(root, dir)
	if err != nil {
		return nil, err
	}
	p.imp = exportdata.Importer(p.fset, exports, nil)
	for _, name := range bp.GoFiles {
		rel := dir + "/" + name
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(p.fset, rel, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		p.Files = append(p.Files, rel)
		p.srcs[rel], p.asts[rel] = src, f
	}
	sort.Strings(p.Files)
	info, tpkg, err := p.check(nil)
	if err != nil {
		return nil, fmt.Errorf("%s does not type-check: %w", dir, err)
	}
	p.info, p.tpkg = info, tpkg
	return p, nil
}

// exportFiles maps the import path of every dependency of dir (and of
// package active, which schemas import) to its export data, as the go
// command builds it (go list -export).
func exportFiles(root, dir string) (map[string]string, error) {
	return exportdata.Files(root, "./"+dir, "./"+ActivePath)
}

// Source is the file's original text.
func (p *Package) Source(file string) []byte { return p.srcs[file] }

// check type-checks the package with file replaced by its mutated text
// (nil: none replaced).
func (p *Package) check(m *Mutant) (*types.Info, *types.Package, error) {
	if m == nil {
		return p.checkFile("", nil)
	}
	src := m.Apply(p.srcs[m.File])
	if strings.Contains(m.Repl, "automutActive.") {
		// A mutant written with package active's helpers (cc-plain-store)
		// imports it, as its schema does.
		src = []byte(addImport(p.mod, string(src)))
	}
	return p.checkFile(m.File, src)
}

// checkWith type-checks the package with file's text replaced by src.
func (p *Package) checkWith(file string, src []byte) error {
	_, _, err := p.checkFile(file, src)
	return err
}

func (p *Package) checkFile(file string, src []byte) (*types.Info, *types.Package, error) {
	files := make([]*ast.File, 0, len(p.Files))
	fset := p.fset
	for _, name := range p.Files {
		f := p.asts[name]
		if name == file {
			var err error
			if f, err = parser.ParseFile(fset, name, src, 0); err != nil {
				return nil, nil, err
			}
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	var first error
	conf := types.Config{Importer: p.imp, Error: func(err error) {
		if first == nil {
			first = err
		}
	}}
	tpkg, _ := conf.Check(p.Dir, fset, files, info)
	return info, tpkg, first
}

// Compiles reports whether the package type-checks with m applied: a
// mutant that does not is not generated.
func (p *Package) Compiles(m Mutant) bool {
	_, _, err := p.check(&m)
	return err == nil
}

// Generate returns every mutant of file by the classic operators that
// type-checks, in source order, and how many candidates were dropped
// because they did not.
func (p *Package) Generate(file string) (ms []Mutant, dropped int, err error) {
	return p.GenerateSet(file, Classic)
}

// GenerateSet is Generate with the operators of set.
func (p *Package) GenerateSet(file string, set OpSet) (ms []Mutant, dropped int, err error) {
	return p.GenerateSetOf(file, set, nil)
}

// GenerateSetOf is GenerateSet limited to the mutants whose Stem want
// accepts (nil: every one). The others are neither type-checked nor
// returned; since a mutant's number counts only the mutants of its own
// stem, each one returned has the ID GenerateSet gives it, and dropped
// counts the wanted candidates that did not type-check.
func (p *Package) GenerateSetOf(file string, set OpSet, want func(stem string) bool) (ms []Mutant, dropped int, err error) {
	f, ok := p.asts[file]
	if !ok {
		return nil, 0, fmt.Errorf("%s is not a file of the default build of %s", file, p.Dir)
	}
	g := &generator{p: p, file: file, src: p.srcs[file], fixed: map[ast.Stmt]bool{}}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ForStmt:
			g.fixed[x.Init], g.fixed[x.Post] = true, true
		case *ast.IfStmt:
			g.fixed[x.Init] = true
		case *ast.SwitchStmt:
			g.fixed[x.Init] = true
		case *ast.TypeSwitchStmt:
			g.fixed[x.Init] = true
		}
		return true
	})
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		g.fn = funcName(fn)
		if set == Concurrency {
			g.concurrency(fn)
			continue
		}
		ast.Inspect(fn.Body, g.visit)
	}
	seen := map[string]int{}
	for _, m := range g.out {
		k := m.Stem()
		if want != nil && !want(k) {
			continue
		}
		if needsCheck[m.Op] && !p.Compiles(m) {
			dropped++
			continue
		}
		m.N = seen[k]
		seen[k]++
		ms = append(ms, m)
	}
	return ms, dropped, nil
}

// needsCheck are the operators whose mutants may not compile (an unused
// variable, a conversion the context needs, a constant division by zero);
// the others always do on the operand types they are offered.
var needsCheck = map[string]bool{"arith": true, "bitwise": true, "sign": true, "remove": true, "conversion": true,
	"cc-cas-split": true, "cc-swap": true, "cc-hoist-load": true, "cc-drop-recheck": true, "cc-plain-store": true, "cc-one-attempt": true, "cc-drop-epoch": true, "cc-torn-load": true}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

type generator struct {
	p     *Package
	file  string
	src   []byte
	fn    string
	out   []Mutant
	fixed map[ast.Stmt]bool // statements in a header (for post, if init): no wrapping
}

func (g *generator) text(n ast.Node) string {
	return string(g.src[g.off(n.Pos()):g.off(n.End())])
}

func (g *generator) off(pos token.Pos) int { return g.p.fset.Position(pos).Offset }

// add adds a mutant replacing [start, end) by repl, inside node (an
// expression, or a statement when stmt is set).
func (g *generator) add(op string, node ast.Node, start, end token.Pos, repl string) {
	pos := g.p.fset.Position(start)
	s, e := g.off(start), g.off(end)
	m := Mutant{File: g.file, Func: g.fn, Op: op, Line: pos.Line, Col: pos.Column,
		Start: s, End: e, Orig: string(g.src[s:e]), Repl: repl,
		NodeStart: g.off(node.Pos()), NodeEnd: g.off(node.End())}
	switch n := node.(type) {
	case ast.Stmt:
		m.Stmt = true
		m.Fixed = g.fixed[n]
		// x++, x--, x op= y in a loop header become x = <expression>, the
		// expression chosen at run time (an assignment may stand where an
		// if may not).
		if m.Fixed {
			switch x := n.(type) {
			case *ast.IncDecStmt:
				if t := g.typeOf(x.X); t != nil {
					v := g.text(x.X)
					m.Fixed, m.HeaderX = false, v
					m.HeaderOrig, m.HeaderMut = v+" + 1", v+" - 1"
					if x.Tok == token.DEC {
						m.HeaderOrig, m.HeaderMut = m.HeaderMut, m.HeaderOrig
					}
					m.Type = types.TypeString(t, g.qualifier)
				}
			case *ast.AssignStmt:
				if to, ok := assignSwap[x.Tok]; ok && len(x.Lhs) == 1 && len(x.Rhs) == 1 {
					if t := g.typeOf(x.Lhs[0]); t != nil {
						v, y := g.text(x.Lhs[0]), g.text(x.Rhs[0])
						bin := func(tok token.Token) string {
							return v + " " + strings.TrimSuffix(tok.String(), "=") + " (" + y + ")"
						}
						m.Fixed, m.HeaderX = false, v
						m.HeaderOrig, m.HeaderMut = bin(x.Tok), bin(to)
						m.Type = types.TypeString(t, g.qualifier)
					}
				}
			}
		}
	case ast.Expr:
		t := g.typeOf(n)
		if t == nil {
			m.Fixed = true
			break
		}
		if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
			t = types.Default(t)
		}
		m.Type = types.TypeString(t, g.qualifier)
	}
	g.out = append(g.out, m)
}

// qualifier names another package's types by the name this file imports it
// under.
func (g *generator) qualifier(p *types.Package) string {
	if p == g.p.tpkg {
		return ""
	}
	for _, im := range g.p.asts[g.file].Imports {
		path := strings.Trim(im.Path.Value, `"`)
		if path == p.Path() {
			if im.Name != nil {
				return im.Name.Name
			}
			return p.Name()
		}
	}
	return p.Name()
}

// replaceOp adds a mutant that swaps the operator token at pos (of
// length len(old)) for new.
func (g *generator) replaceOp(op string, node ast.Node, pos token.Pos, old, new string) {
	g.add(op, node, pos, pos+token.Pos(len(old)), new)
}

func (g *generator) typeOf(e ast.Expr) types.Type {
	if tv, ok := g.p.info.Types[e]; ok {
		return tv.Type
	}
	return nil
}

func isNumeric(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsNumeric != 0
}

func isConst(g *generator, e ast.Expr) bool {
	tv, ok := g.p.info.Types[e]
	return ok && tv.Value != nil
}

var arithSwap = map[token.Token][]token.Token{
	token.ADD: {token.SUB}, token.SUB: {token.ADD}, token.MUL: {token.QUO}, token.QUO: {token.MUL}, token.REM: {token.MUL},
}

var bitSwap = map[token.Token][]token.Token{
	token.AND: {token.OR}, token.OR: {token.AND}, token.XOR: {token.AND}, token.AND_NOT: {token.AND},
	token.SHL: {token.SHR}, token.SHR: {token.SHL},
}

var assignSwap = map[token.Token]token.Token{
	token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN, token.MUL_ASSIGN: token.QUO_ASSIGN,
	token.QUO_ASSIGN: token.MUL_ASSIGN, token.REM_ASSIGN: token.MUL_ASSIGN,
	token.AND_ASSIGN: token.OR_ASSIGN, token.OR_ASSIGN: token.AND_ASSIGN, token.XOR_ASSIGN: token.AND_ASSIGN,
	token.AND_NOT_ASSIGN: token.AND_ASSIGN, token.SHL_ASSIGN: token.SHR_ASSIGN, token.SHR_ASSIGN: token.SHL_ASSIGN,
}

var boundarySwap = map[token.Token]token.Token{token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR}

var negateSwap = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR,
}

func (g *generator) visit(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.BinaryExpr:
		g.binary(x)
	case *ast.UnaryExpr:
		if isConst(g, x) {
			return true
		}
		switch x.Op {
		case token.NOT:
			g.add("negate", x, x.Pos(), x.X.Pos(), "")
		case token.SUB:
			g.add("sign", x, x.Pos(), x.X.Pos(), "")
		}
	case *ast.AssignStmt:
		if to, ok := assignSwap[x.Tok]; ok {
			op := "arith"
			if x.Tok >= token.AND_ASSIGN && x.Tok <= token.AND_NOT_ASSIGN {
				op = "bitwise"
			}
			g.replaceOp(op, x, x.TokPos, x.Tok.String(), to.String())
		}
	case *ast.IncDecStmt:
		to := "--"
		if x.Tok == token.DEC {
			to = "++"
		}
		g.replaceOp("incdec", x, x.TokPos, x.Tok.String(), to)
	case *ast.CallExpr:
		g.call(x)
	case *ast.BlockStmt:
		g.removals(x.List)
	case *ast.CaseClause:
		g.removals(x.Body)
	case *ast.CommClause:
		g.removals(x.Body)
	}
	return true
}

// binary adds the operator mutants of a binary expression that is not a
// constant (a constant expression is folding, not code).
func (g *generator) binary(x *ast.BinaryExpr) {
	if isConst(g, x) {
		return
	}
	switch {
	case arithSwap[x.Op] != nil:
		if t := g.typeOf(x); t != nil && isNumeric(t) {
			for _, to := range arithSwap[x.Op] {
				g.replaceOp("arith", x, x.OpPos, x.Op.String(), to.String())
			}
		}
	case bitSwap[x.Op] != nil:
		for _, to := range bitSwap[x.Op] {
			g.replaceOp("bitwise", x, x.OpPos, x.Op.String(), to.String())
		}
	case x.Op == token.LAND:
		g.replaceOp("logical", x, x.OpPos, "&&", "||")
	case x.Op == token.LOR:
		g.replaceOp("logical", x, x.OpPos, "||", "&&")
	}
	if to, ok := boundarySwap[x.Op]; ok {
		g.replaceOp("boundary", x, x.OpPos, x.Op.String(), to.String())
	}
	if to, ok := negateSwap[x.Op]; ok {
		g.replaceOp("negate", x, x.OpPos, x.Op.String(), to.String())
	}
}

// removals adds a "remove" mutant for each statement of a list that can go
// without a syntax change: a call, an assignment that declares nothing,
// ++/--, break and continue. (Whether the rest still compiles, say with a
// variable now unused, is for the type check.)
func (g *generator) removals(list []ast.Stmt) {
	for _, s := range list {
		switch x := s.(type) {
		case *ast.ExprStmt:
			if _, ok := x.X.(*ast.CallExpr); !ok {
				continue
			}
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				continue
			}
		case *ast.IncDecStmt:
		case *ast.BranchStmt:
			if x.Tok != token.BREAK && x.Tok != token.CONTINUE {
				continue
			}
		case *ast.GoStmt, *ast.DeferStmt:
		default:
			continue
		}
		g.add("remove", s, s.Pos(), s.End(), "")
	}
}

// call adds the compare-and-swap and conversion mutants of a call.
func (g *generator) call(x *ast.CallExpr) {
	// A conversion T(v) of a numeric value to a numeric type, dropped.
	if tv, ok := g.p.info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 && !isConst(g, x) {
		if isNumeric(tv.Type) {
			// Only a conversion to the type the value already has: it
			// changes no type, only rounding (an explicit float64
			// conversion rounds a product that the compiler may otherwise
			// fuse into a multiply-add).
			if at := g.typeOf(x.Args[0]); at != nil && types.Identical(at, tv.Type) {
				g.add("conversion", x, x.Pos(), x.End(), "("+g.text(x.Args[0])+")")
			}
		}
		return
	}
	sel, ok := x.Fun.(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "CompareAndSwap" && sel.Sel.Name != "CompareAndSwapLo") {
		return
	}
	s, ok := g.p.info.Selections[sel]
	if !ok {
		return
	}
	recv := types.TypeString(s.Recv(), nil)
	if !strings.Contains(recv, "sync/atomic.") && !strings.Contains(recv, "/internal/seam.") {
		return
	}
	r := g.text(sel.X)
	args := make([]string, len(x.Args))
	for i, a := range x.Args {
		args[i] = g.text(a)
	}
	pair := strings.HasSuffix(strings.TrimPrefix(recv, "*"), "seam.Pair")
	var store, loadStore string
	// The replacements name their own variables so that no argument's
	// name is shadowed.
	switch {
	case pair && sel.Sel.Name == "CompareAndSwap" && len(args) == 4:
		store = fmt.Sprintf("func() bool { %s.Store(%s, %s); return true }()", r, args[2], args[3])
		loadStore = fmt.Sprintf("func() bool { if mLo, mHi := %s.Load(); mLo == %s && mHi == %s { %s.Store(%s, %s); return true }; return false }()",
			r, args[0], args[1], r, args[2], args[3])
	case pair && sel.Sel.Name == "CompareAndSwapLo" && len(args) == 2:
		store = fmt.Sprintf("func() bool { _, mHi := %s.Load(); %s.Store(%s, mHi); return true }()", r, r, args[1])
		loadStore = fmt.Sprintf("func() bool { if mLo, mHi := %s.Load(); mLo == %s { %s.Store(%s, mHi); return true }; return false }()",
			r, args[0], r, args[1])
	case !pair && len(args) == 2:
		store = fmt.Sprintf("func() bool { %s.Store(%s); return true }()", r, args[1])
		loadStore = fmt.Sprintf("func() bool { if %s.Load() == %s { %s.Store(%s); return true }; return false }()", r, args[0], r, args[1])
	default:
		return
	}
	g.add("cas-store", x, x.Pos(), x.End(), store)
	g.add("cas-loadstore", x, x.Pos(), x.End(), loadStore)
}
