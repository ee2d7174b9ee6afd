package generate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Plain loads reported to the race detector. A plain load is no switch
// point: it runs inside the step of the seam operation before it. The
// explorer's happens-before race detector (internal/interleave/race.go) sees
// it all the same, so a load that another thread's plain store can reach
// unordered is a data race of the run, whatever the schedule: the explored
// copies read shared memory as (*seam.PlainLoad(&x)), which reports the
// load with its address and size where Go evaluates it, and returns &x.
//
// Which loads: every expression evaluated for its value that reads memory
// another thread may reach, as the types say: a field reached through a
// pointer (b.payload), a field or element of such a place, an element of a
// slice, a dereference (*p), a slice's header where len, cap, an index or
// a range reads it, and a package-level variable or one a function
// literal captured, named alone (whose stores are marked here too, as
// plainStores marks the others'). A place of the running call's own (privateLocals,
// as for stores) is left alone, and so is every place whose address only
// is taken: &x, the receiver of a method with a pointer receiver (the seam
// words' operations), the operand of unsafe.Sizeof. Seam words themselves
// are never loaded plainly (their methods are the atomic operations).
//
// The copy's types are the original table file's: the package of impl/ is
// type-checked from its source with the (patched) file in place, and the
// offsets found there are moved past the one import the copy rewrites.

// loadsImporter type-checks imports from source, once for a whole run of
// the generator.
var (
	loadsImporterOnce sync.Once
	loadsImporter     types.Importer
	loadsFset         = token.NewFileSet()
)

func initLoadsImporter() { loadsImporter = importer.ForCompiler(loadsFset, "source", nil) }

// plainLoads returns the insertions that report every qualifying load of
// target (a table file of impl/, holding src) in its copy, whose text is
// copy: the offsets are the copy's.
func plainLoads(root, target string, src, copy []byte, structs map[string]bool, seamPath string) ([]edit, error) {
	loadsImporterOnce.Do(initLoadsImporter)
	dir := filepath.Join(root, filepath.FromSlash(path0(target)))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	ctx := build.Default
	var files []*ast.File
	var file *ast.File
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := ctx.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		isTarget := name == filepath.Base(target)
		if isTarget {
			text = src
		}
		f, err := parser.ParseFile(loadsFset, filepath.Join(dir, name), text, 0)
		if err != nil {
			return nil, err
		}
		if isTarget {
			file = f
		}
		files = append(files, f)
	}
	if file == nil {
		return nil, fmt.Errorf("%s: not in its package's build", target)
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	// A source that does not compile is marked as far as its types go:
	// the copy's build, or a check of the generator's that names the
	// mistake (a word renamed), reports it.
	conf := types.Config{Importer: loadsImporter, Error: func(error) {}}
	conf.Check(path0(target), loadsFset, files, info)
	// The copy moves every offset after the seam import by the length the
	// rewritten import adds.
	base := loadsFset.File(file.Pos()).Base()
	from := fmt.Sprintf("%q", seamPath)
	at := bytes.Index(src, []byte(from))
	delta := len(copy) - len(src)
	shift := func(p token.Pos) int {
		o := int(p) - base
		if at >= 0 && o > at {
			o += delta
		}
		return o
	}
	l := &loader{info: info}
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		l.private = privateLocals(fn, structs)
		l.inList = stmtsInLists(fn.Body)
		ast.Inspect(fn.Body, l.visit)
	}
	if l.err != nil {
		return nil, fmt.Errorf("%s: %v", target, l.err)
	}
	var edits []edit
	for _, st := range l.stores {
		at := shift(st.stmt.Pos())
		place := src[int(st.place.Pos())-base : int(st.place.End())-base]
		edits = append(edits, edit{at, at, "seam.PlainStore(&" + string(place) + "); "})
	}
	for _, e := range l.loads {
		if star, ok := ast.Unparen(e).(*ast.StarExpr); ok {
			// *p is read as (*seam.PlainLoad(p)): its address is p.
			edits = append(edits, edit{shift(star.Pos()), shift(star.Pos()) + 1, "(*seam.PlainLoad("}, edit{shift(star.End()), shift(star.End()), "))"})
			continue
		}
		edits = append(edits, edit{shift(e.Pos()), shift(e.Pos()), "(*seam.PlainLoad(&"}, edit{shift(e.End()), shift(e.End()), "))"})
	}
	return edits, nil
}

// path0 is target's directory ("impl/credits" of "impl/credits/credits.go").
func path0(target string) string { return filepath.ToSlash(filepath.Dir(filepath.FromSlash(target))) }

// loader finds the loads of one function body, outermost first, and the
// stores to variables named alone that another thread may reach.
type loader struct {
	info    *types.Info
	private map[string]bool
	loads   []ast.Expr
	// lits are the function literals around the node visited, innermost
	// last; inList the statements of the function that stand in a list.
	lits   []*ast.FuncLit
	inList map[ast.Stmt]bool
	stores []identStore
	err    error
}

// identStore is a store to a shared variable named alone (sharedIdent),
// or to a part of one, marked in front of its statement.
type identStore struct {
	stmt  ast.Stmt
	place ast.Expr
}

// sharedIdent reports whether id names a variable another thread may
// reach though it is named alone: a package-level variable, or one
// declared outside the innermost function literal around id (captured:
// the literal may run on another thread, or be kept and called again).
// A table of impl/ keeps no state of its own there today; a change that
// does (a memo, a counter) is seen by the race detector all the same.
func (l *loader) sharedIdent(id *ast.Ident) bool {
	v, ok := l.info.Uses[id].(*types.Var)
	if !ok || v.IsField() || v.Pkg() == nil || isSeamWord(v.Type()) {
		return false
	}
	if v.Parent() == v.Pkg().Scope() {
		return true
	}
	if len(l.lits) == 0 {
		return false
	}
	lit := l.lits[len(l.lits)-1]
	return v.Pos() < lit.Pos() || v.Pos() >= lit.End()
}

// rootIdent is the variable whose own memory e is part of (a field of a
// struct value, an element of an array value), or nil when e reaches its
// memory through a pointer, a slice or a call.
func (l *loader) rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			if sel := l.info.Selections[x]; sel == nil || sel.Kind() != types.FieldVal || isPtr(l.info.TypeOf(x.X)) {
				return nil
			}
			e = x.X
		case *ast.IndexExpr:
			if _, arr := under(l.info.TypeOf(x.X)).(*types.Array); !arr {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

// storeTo notes the stores of stmt to shared variables named alone, or
// to a field or element of one that plainStores takes for the call's own
// (a private local that a function literal captured).
func (l *loader) storeTo(stmt ast.Stmt, lhs ...ast.Expr) {
	for _, e := range lhs {
		id := l.rootIdent(e)
		if id == nil || !l.sharedIdent(id) {
			continue
		}
		if _, alone := ast.Unparen(e).(*ast.Ident); !alone && !ownPlace(ast.Unparen(e), l.private) {
			continue // plainStores marks it
		}
		if !l.inList[stmt] && l.err == nil {
			l.err = fmt.Errorf("line %d: a store to %s, which another thread may reach, outside a statement list; move it into the block so the explorer can see it",
				loadsFset.Position(stmt.Pos()).Line, id.Name)
		}
		l.stores = append(l.stores, identStore{stmt, e})
	}
}

// visit walks n; every expression it meets in a statement is in value
// context unless a parent said otherwise (loc).
func (l *loader) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.AssignStmt:
		if n.Tok != token.DEFINE {
			l.storeTo(n, n.Lhs...)
		}
		for _, e := range n.Lhs {
			l.place(e, n.Tok != token.ASSIGN && n.Tok != token.DEFINE)
		}
		for _, e := range n.Rhs {
			l.value(e)
		}
		return false
	case *ast.IncDecStmt:
		l.storeTo(n, n.X)
		l.place(n.X, true)
		return false
	case *ast.RangeStmt:
		if n.Tok == token.ASSIGN {
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok && l.sharedIdent(id) && l.err == nil {
					l.err = fmt.Errorf("line %d: a range that assigns %s, which another thread may reach, at every iteration; declare the variable in the range (:=) so the explorer can see the store",
						loadsFset.Position(n.Pos()).Line, id.Name)
				}
			}
		}
		if n.Key != nil && n.Tok == token.ASSIGN {
			l.place(n.Key, false)
		}
		if n.Value != nil && n.Tok == token.ASSIGN {
			l.place(n.Value, false)
		}
		l.value(n.X)
		ast.Inspect(n.Body, l.visit)
		return false
	case ast.Expr:
		l.value(n)
		return false
	}
	return true
}

// place handles an expression that is stored to (and loaded first when
// rmw): its own place is the store's (marked by plainStores) and, for an
// op= or ++, a load too; what computes its address is evaluated.
func (l *loader) place(e ast.Expr, rmw bool) {
	if rmw {
		l.value(e)
		return
	}
	l.address(e)
}

// value handles e evaluated for its value.
func (l *loader) value(e ast.Expr) {
	if e == nil {
		return
	}
	if tv, ok := l.info.Types[e]; ok && (tv.IsType() || tv.Value != nil) {
		return // a type, or a constant: nothing is read
	}
	if l.sharedPlace(e) {
		l.loads = append(l.loads, e)
		l.address(e)
		return
	}
	switch x := e.(type) {
	case *ast.Ident:
		if l.sharedIdent(x) {
			l.loads = append(l.loads, e)
		}
	case *ast.ParenExpr:
		l.value(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			l.address(x.X)
			return
		}
		l.value(x.X)
	case *ast.SelectorExpr:
		l.selector(x)
	case *ast.IndexExpr:
		l.value(x.X)
		l.value(x.Index)
	case *ast.IndexListExpr:
		l.value(x.X)
	case *ast.SliceExpr:
		l.slice(x)
	case *ast.StarExpr:
		l.value(x.X)
	case *ast.BinaryExpr:
		l.value(x.X)
		l.value(x.Y)
	case *ast.CallExpr:
		l.call(x)
	case *ast.CompositeLit:
		l.composite(x)
	case *ast.KeyValueExpr:
		l.value(x.Value)
	case *ast.TypeAssertExpr:
		l.value(x.X)
	case *ast.FuncLit:
		l.funcLit(x)
	}
}

// slice handles a slice expression: slicing an array takes its address,
// slicing a slice or a string reads it; the indexes are read.
func (l *loader) slice(x *ast.SliceExpr) {
	if _, arr := under(l.info.TypeOf(x.X)).(*types.Array); arr {
		l.address(x.X)
	} else {
		l.value(x.X)
	}
	l.value(x.Low)
	l.value(x.High)
	l.value(x.Max)
}

// composite handles a composite literal: its elements are read, and the
// keys of a map or slice literal (a struct literal's keys are field names).
func (l *loader) composite(x *ast.CompositeLit) {
	for _, el := range x.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if _, isStruct := under(l.info.TypeOf(x)).(*types.Struct); !isStruct {
				l.value(kv.Key)
			}
			l.value(kv.Value)
			continue
		}
		l.value(el)
	}
}

// funcLit walks a function literal's body with its own private places.
func (l *loader) funcLit(x *ast.FuncLit) {
	saved := l.private
	l.lits = append(l.lits, x)
	ast.Inspect(x.Body, l.visit)
	l.lits = l.lits[:len(l.lits)-1]
	l.private = saved
}

// selector handles x.sel in value context that is not itself a shared
// place: a method value or call's receiver, a package's name, a field of a
// place of the call's own.
func (l *loader) selector(x *ast.SelectorExpr) {
	sel := l.info.Selections[x]
	if sel == nil {
		return // a qualified identifier (pkg.Name)
	}
	if sel.Kind() == types.FieldVal {
		l.address(x.X)
		return
	}
	// A method: a pointer receiver takes the address of an addressable
	// operand; a value receiver copies it (a load).
	if sig, ok := sel.Obj().Type().(*types.Signature); ok && sig.Recv() != nil {
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr && !isPtr(l.info.TypeOf(x.X)) {
			l.address(x.X)
			return
		}
	}
	l.value(x.X)
}

// call handles a call or a conversion.
func (l *loader) call(x *ast.CallExpr) {
	if tv, ok := l.info.Types[x.Fun]; ok && tv.IsType() {
		for _, a := range x.Args {
			l.value(a)
		}
		return
	}
	if id, ok := ast.Unparen(x.Fun).(*ast.Ident); ok {
		if b, ok := l.info.Uses[id].(*types.Builtin); ok {
			switch b.Name() {
			case "len", "cap":
				// Of an array: a constant, nothing read.
				if _, arr := under(l.info.TypeOf(x.Args[0])).(*types.Array); arr {
					return
				}
			case "new", "make":
				for _, a := range x.Args[1:] {
					l.value(a)
				}
				if b.Name() == "make" {
					return
				}
				return
			}
		}
	}
	if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "unsafe" {
			if sel.Sel.Name == "Sizeof" || sel.Sel.Name == "Alignof" || sel.Sel.Name == "Offsetof" {
				return // not evaluated
			}
		}
	}
	l.value(x.Fun)
	for _, a := range x.Args {
		l.value(a)
	}
}

// address handles e whose address only is needed: nothing of e itself is
// read, but what locates it may be.
func (l *loader) address(e ast.Expr) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		l.address(x.X)
	case *ast.SelectorExpr:
		if sel := l.info.Selections[x]; sel != nil && sel.Kind() == types.FieldVal {
			if isPtr(l.info.TypeOf(x.X)) {
				l.value(x.X) // the pointer is read
			} else {
				l.address(x.X)
			}
		}
	case *ast.IndexExpr:
		switch under(l.info.TypeOf(x.X)).(type) {
		case *types.Array:
			l.address(x.X)
		case *types.Pointer: // a pointer to an array
			l.value(x.X)
		default: // a slice's header is read
			l.value(x.X)
		}
		l.value(x.Index)
	case *ast.StarExpr:
		l.value(x.X)
	case *ast.CompositeLit:
		l.value(x)
	case *ast.CallExpr:
		l.value(x)
	}
}

// sharedPlace reports whether e is a place that another thread may reach,
// read as a whole when evaluated: a field, an element or a dereference, of
// no seam word, not the call's own.
func (l *loader) sharedPlace(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.SelectorExpr:
		sel := l.info.Selections[x]
		if sel == nil || sel.Kind() != types.FieldVal {
			return false
		}
	case *ast.IndexExpr:
		switch under(l.info.TypeOf(x.X)).(type) {
		case *types.Slice, *types.Array, *types.Pointer:
		default:
			return false // a map, a string, a generic instantiation
		}
	case *ast.StarExpr:
	default:
		return false
	}
	if t := l.info.TypeOf(e); t == nil || isSeamWord(t) {
		return false
	}
	if id := l.rootIdent(e); id != nil && l.sharedIdent(id) {
		return true // a part of a captured or package-level variable
	}
	return !ownPlace(e, l.private) && !l.localArray(e)
}

// localArray reports whether e is an element or field of a local variable
// of an array or struct type (its own memory, however it was declared).
func (l *loader) localArray(e ast.Expr) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			if isPtr(l.info.TypeOf(x.X)) {
				return false
			}
			e = x.X
		case *ast.IndexExpr:
			if _, arr := under(l.info.TypeOf(x.X)).(*types.Array); !arr {
				return false
			}
			e = x.X
		case *ast.Ident:
			v, ok := l.info.Uses[x].(*types.Var)
			return ok && !v.IsField() && v.Parent() != nil && v.Parent() != v.Pkg().Scope() && !isPtr(v.Type()) && !l.sharedIdent(x)
		default:
			return false
		}
	}
}

func under(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

func isPtr(t types.Type) bool {
	_, ok := under(t).(*types.Pointer)
	return ok
}

// isSeamWord reports whether t is a type of the seam (an atomic word,
// whose operations are its methods).
func isSeamWord(t types.Type) bool {
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	p := n.Obj().Pkg().Path()
	return strings.HasSuffix(p, "/internal/seam") || p == "sync/atomic"
}
