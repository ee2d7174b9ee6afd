package rewrite

import (
	"go/ast"
	"go/token"
	"go/types"
)

// This file is the typed part of the rewrite: every plain (non-atomic)
// load and store that may reach memory another thread can see is reported
// to the explorer, with its address, where it happens.
//
// A location is shared when it is reached through a pointer (a field
// through a pointer, an element of a slice, a pointer's target), when it
// is a package-level variable, or when it is a local variable that a
// function literal captures or whose address is taken. A field of a
// struct value and an element of an array value are shared when the
// value is. A load of a shared location e becomes (*tgrt_.PlainLoad(&e)),
// a store *tgrt_.PlainWrite(&e) = v, a read-modify-write (e++, e += v)
// *tgrt_.PlainWrite(tgrt_.PlainLoad(&e)) += v: each reports the access
// where Go evaluates it, after every call to its left, and returns the
// address it was given. A store whose right-hand side calls a function
// becomes tgrt_.Store(&e, v), so that it is reported after the call
// (which may lock, unlock or load an atomic) and not before. A map's
// read or write is an access of the map itself: m[k] becomes
// tgrt_.MapRead(m)[k] or tgrt_.MapWrite(m)[k], and so do len(m),
// delete, clear and range. A range over a slice with a value variable
// reads each element (tgrt_.LoadElems, when the loop starts).
//
// Taking an address (&e.f) is no access; neither is len of an array,
// nor the operand of unsafe.Sizeof, Alignof or Offsetof.

// The modes an expression is visited in.
type mode uint8

const (
	// value: the expression is evaluated: a shared location is loaded.
	value mode = iota
	// location: only the expression's location is needed (its address is
	// taken, it is stored to, or a field or an array element of it is
	// selected): it is not loaded itself.
	location
)

// collectShared finds the local variables of the package's files that a
// function literal captures or whose address is taken: their accesses are
// reported like those of package-level variables.
func collectShared(info *types.Info, files []*ast.File) map[*types.Var]bool {
	c := &sharedVars{info: info, shared: map[*types.Var]bool{}}
	for _, f := range files {
		c.lits, c.stack = nil, nil
		ast.Inspect(f, c.visit)
	}
	return c.shared
}

// sharedVars is collectShared's walk of one file: the variables found so
// far, and the function literals and nodes enclosing the current node.
type sharedVars struct {
	info   *types.Info
	shared map[*types.Var]bool
	lits   []*ast.FuncLit
	stack  []ast.Node
}

// visit marks the variables node n shares: those it captures when it is
// an identifier inside function literals, and those whose address it
// takes (&x, x[:] of an array, a pointer method called on x).
func (c *sharedVars) visit(n ast.Node) bool {
	if n == nil {
		if _, ok := c.stack[len(c.stack)-1].(*ast.FuncLit); ok {
			c.lits = c.lits[:len(c.lits)-1]
		}
		c.stack = c.stack[:len(c.stack)-1]
		return true
	}
	c.stack = append(c.stack, n)
	switch n := n.(type) {
	case *ast.FuncLit:
		c.lits = append(c.lits, n)
	case *ast.Ident:
		c.captured(n)
	case *ast.UnaryExpr:
		if n.Op == token.AND {
			c.markRoot(n.X)
		}
	case *ast.SliceExpr:
		if _, ok := under(c.info.TypeOf(n.X)).(*types.Array); ok {
			c.markRoot(n.X)
		}
	case *ast.SelectorExpr:
		if c.pointerMethodOfValue(n) {
			c.markRoot(n.X)
		}
	}
	return true
}

// local is the local variable id uses, or nil (a field, a package-level
// variable, or no variable).
func (c *sharedVars) local(id *ast.Ident) *types.Var {
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || v.IsField() || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() {
		return nil
	}
	return v
}

// captured marks the local variable id uses when it is declared outside
// one of the function literals id is in: a use of a captured variable.
func (c *sharedVars) captured(id *ast.Ident) {
	for _, l := range c.lits {
		if v := c.local(id); v != nil && (v.Pos() < l.Pos() || v.Pos() >= l.End()) {
			c.shared[v] = true
		}
	}
}

// markRoot marks the local variable at the root of e, if any.
func (c *sharedVars) markRoot(e ast.Expr) {
	if id := root(c.info, e); id != nil {
		if v := c.local(id); v != nil {
			c.shared[v] = true
		}
	}
}

// pointerMethodOfValue reports whether sel is a method with a pointer
// receiver called on an addressable value, which takes its address.
func (c *sharedVars) pointerMethodOfValue(sel *ast.SelectorExpr) bool {
	s := c.info.Selections[sel]
	if s == nil || s.Kind() != types.MethodVal || isPointer(c.info.TypeOf(sel.X)) {
		return false
	}
	sig, ok := s.Obj().Type().(*types.Signature)
	return ok && sig.Recv() != nil && isPointer(sig.Recv().Type())
}

// root returns the variable at the root of e, a chain of parentheses,
// fields of struct values and elements of arrays, or nil.
func root(info *types.Info, e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			sel := info.Selections[x]
			if sel == nil || sel.Kind() != types.FieldVal || sel.Indirect() {
				return nil
			}
			e = x.X
		case *ast.IndexExpr:
			if _, ok := under(info.TypeOf(x.X)).(*types.Array); !ok {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

func under(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

func isPointer(t types.Type) bool {
	_, ok := under(t).(*types.Pointer)
	return ok
}

// accesses reports the plain accesses of every function body of the file
// (package-level initializers run at init, before any exploration: only
// the function literals in them are visited).
func (r *rewriter) accesses() {
	if r.info == nil || !r.generics {
		return
	}
	for _, d := range r.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				r.stmt(d.Body)
			}
		case *ast.GenDecl:
			ast.Inspect(d, func(n ast.Node) bool {
				if fl, ok := n.(*ast.FuncLit); ok {
					r.stmt(fl.Body)
					return false
				}
				return true
			})
		}
	}
}

// insert adds text at p.
func (r *rewriter) insert(p token.Pos, text string) {
	off := r.off(p)
	r.edits = append(r.edits, edit{off, off, text})
	r.needRT = true
}

func (r *rewriter) stmts(list []ast.Stmt) {
	for _, s := range list {
		r.stmt(s)
	}
}

func (r *rewriter) exprs(list []ast.Expr) {
	for _, e := range list {
		r.expr(e, value)
	}
}

// stmt reports the plain accesses of s and of the statements in it.
func (r *rewriter) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case nil:
	case *ast.BlockStmt:
		if s != nil {
			r.stmts(s.List)
		}
	case *ast.ExprStmt:
		r.expr(s.X, value)
	case *ast.SendStmt:
		r.expr(s.Chan, value)
		r.expr(s.Value, value)
	case *ast.IncDecStmt:
		r.store(s.X, true)
	case *ast.AssignStmt:
		r.assign(s)
	case *ast.GoStmt:
		r.expr(s.Call, value)
	case *ast.DeferStmt:
		r.expr(s.Call, value)
	case *ast.ReturnStmt:
		r.exprs(s.Results)
	case *ast.IfStmt:
		r.stmt(s.Init)
		r.expr(s.Cond, value)
		r.stmt(s.Body)
		r.stmt(s.Else)
	case *ast.SwitchStmt:
		r.switchStmt(s)
	case *ast.TypeSwitchStmt:
		r.typeSwitchStmt(s)
	case *ast.SelectStmt:
		for _, c := range s.Body.List {
			r.commClause(c.(*ast.CommClause))
		}
	case *ast.ForStmt:
		r.forStmt(s)
	case *ast.RangeStmt:
		r.rangeStmt(s)
	case *ast.LabeledStmt:
		r.stmt(s.Stmt)
	case *ast.DeclStmt:
		r.declStmt(s)
	}
}

// switchStmt reports the accesses of an expression switch: its init, its
// tag, and each case's expressions and body.
func (r *rewriter) switchStmt(s *ast.SwitchStmt) {
	r.stmt(s.Init)
	if s.Tag != nil {
		r.expr(s.Tag, value)
	}
	for _, c := range s.Body.List {
		cc := c.(*ast.CaseClause)
		r.exprs(cc.List)
		r.stmts(cc.Body)
	}
}

// typeSwitchStmt reports the accesses of a type switch: its init, the
// operand of its type assertion, and each case's body.
func (r *rewriter) typeSwitchStmt(s *ast.TypeSwitchStmt) {
	r.stmt(s.Init)
	switch a := s.Assign.(type) {
	case *ast.ExprStmt:
		r.expr(a.X.(*ast.TypeAssertExpr).X, value)
	case *ast.AssignStmt:
		r.expr(a.Rhs[0].(*ast.TypeAssertExpr).X, value)
	}
	for _, c := range s.Body.List {
		r.stmts(c.(*ast.CaseClause).Body)
	}
}

// commClause reports the accesses of a select's case: its send or
// receive (a receive that assigns stores to its left-hand side; one that
// declares stores nothing shared), then its body.
func (r *rewriter) commClause(cc *ast.CommClause) {
	switch comm := cc.Comm.(type) {
	case *ast.SendStmt:
		r.stmt(comm)
	case *ast.ExprStmt:
		r.stmt(comm)
	case *ast.AssignStmt:
		if comm.Tok == token.DEFINE {
			r.exprs(comm.Rhs)
		} else {
			for _, l := range comm.Lhs {
				r.store(l, false)
			}
			r.exprs(comm.Rhs)
		}
	}
	r.stmts(cc.Body)
}

// forStmt reports the accesses of a three-clause loop: init, condition,
// post statement, body.
func (r *rewriter) forStmt(s *ast.ForStmt) {
	r.stmt(s.Init)
	if s.Cond != nil {
		r.expr(s.Cond, value)
	}
	r.stmt(s.Post)
	r.stmt(s.Body)
}

// declStmt reports the loads of a var declaration's initial values.
func (r *rewriter) declStmt(s *ast.DeclStmt) {
	if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
		for _, spec := range g.Specs {
			r.exprs(spec.(*ast.ValueSpec).Values)
		}
	}
}

// assign reports the stores of an assignment and the loads of its
// operands.
func (r *rewriter) assign(s *ast.AssignStmt) {
	switch s.Tok {
	case token.DEFINE:
		// The left-hand side declares (or redeclares) local
		// variables: a redeclared variable that is shared is not
		// reported (see the package documentation).
		r.exprs(s.Rhs)
	case token.ASSIGN:
		if len(s.Lhs) == 1 && len(s.Rhs) == 1 && r.storeAfterCall(s) {
			return
		}
		for _, l := range s.Lhs {
			r.store(l, false)
		}
		r.exprs(s.Rhs)
	default: // op=
		r.store(s.Lhs[0], true)
		r.exprs(s.Rhs)
	}
}

// storeAfterCall rewrites lhs = rhs, where lhs is a shared location and
// rhs calls a function, to tgrt_.Store(&lhs, rhs), so the store is
// reported after the call, where it happens. It reports whether it did:
// it does not when the two types differ (Store's type parameter would
// not be inferred), when lhs is a map's element or not shared.
func (r *rewriter) storeAfterCall(s *ast.AssignStmt) bool {
	lhs, rhs := ast.Unparen(s.Lhs[0]), s.Rhs[0]
	if !r.sharedLocation(lhs) || !calls(r.info, rhs) {
		return false
	}
	lt, rt := r.info.TypeOf(lhs), r.info.Types[rhs]
	if lt == nil || rt.Type == nil || !types.Identical(lt, rt.Type) {
		return false
	}
	if b, ok := rt.Type.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		return false
	}
	r.insert(lhs.Pos(), rtName+".Store(&")
	r.expr(lhs, location)
	r.edits = append(r.edits, edit{r.off(s.TokPos), r.off(s.TokPos) + 1, ","})
	r.expr(rhs, value)
	r.insert(rhs.End(), ")")
	return true
}

// calls reports whether e calls a function (a conversion or a builtin
// other than those that may run code is not a call) or receives.
func calls(info *types.Info, e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; ok && tv.IsType() {
				return true
			}
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
				if _, ok := info.Uses[id].(*types.Builtin); ok {
					return true
				}
			}
			found = true
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				found = true
			}
		}
		return !found
	})
	return found
}

// sharedLocation reports whether e is an addressable location of shared
// memory.
func (r *rewriter) sharedLocation(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	return ok && tv.Addressable() && r.shared(e)
}

// shared reports whether the location e may be reached by another thread.
func (r *rewriter) shared(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return r.shared(e.X)
	case *ast.Ident:
		v, ok := r.info.Uses[e].(*types.Var)
		if !ok {
			return false
		}
		return v.Pkg() != nil && v.Parent() == v.Pkg().Scope() || r.sharedVars[v]
	case *ast.SelectorExpr:
		if v := r.qualified(e); v != nil {
			return true
		}
		sel := r.info.Selections[e]
		if sel == nil || sel.Kind() != types.FieldVal {
			return false
		}
		return sel.Indirect() || r.shared(e.X)
	case *ast.IndexExpr:
		switch t := under(r.info.TypeOf(e.X)).(type) {
		case *types.Array:
			return r.shared(e.X)
		case *types.Slice:
			return true
		case *types.Pointer:
			_, ok := under(t.Elem()).(*types.Array)
			return ok
		}
		return false
	case *ast.StarExpr:
		return true
	}
	return false
}

// qualified returns the package-level variable a qualified identifier
// (pkg.V) names, or nil.
func (r *rewriter) qualified(e *ast.SelectorExpr) *types.Var {
	id, ok := e.X.(*ast.Ident)
	if !ok {
		return nil
	}
	if _, ok := r.info.Uses[id].(*types.PkgName); !ok {
		return nil
	}
	v, _ := r.info.Uses[e.Sel].(*types.Var)
	return v
}

// store reports a store to lhs (and the load before it, for a
// read-modify-write).
func (r *rewriter) store(lhs ast.Expr, rmw bool) {
	l := ast.Unparen(lhs)
	if id, ok := l.(*ast.Ident); ok && id.Name == "_" {
		return
	}
	if ix, ok := l.(*ast.IndexExpr); ok {
		if _, ok := under(r.info.TypeOf(ix.X)).(*types.Map); ok {
			r.mapAccess(ix.X, true)
			r.expr(ix.Index, value)
			return
		}
	}
	if !r.sharedLocation(l) {
		r.expr(l, location)
		return
	}
	if rmw {
		r.insert(lhs.Pos(), "*"+rtName+".PlainWrite("+rtName+".PlainLoad(&")
		r.expr(l, location)
		r.insert(lhs.End(), "))")
		return
	}
	r.insert(lhs.Pos(), "*"+rtName+".PlainWrite(&")
	r.expr(l, location)
	r.insert(lhs.End(), ")")
}

// mapAccess reports an access of the map m: a read, or a write.
func (r *rewriter) mapAccess(m ast.Expr, write bool) {
	fn := ".MapRead("
	if write {
		fn = ".MapWrite("
	}
	r.insert(m.Pos(), rtName+fn)
	r.expr(m, value)
	r.insert(m.End(), ")")
}

// rangeStmt reports a range's loads: the range expression's, once, and,
// with a value variable, each element of a slice or array, or the map.
func (r *rewriter) rangeStmt(s *ast.RangeStmt) {
	withValue := s.Value != nil
	if id, ok := s.Value.(*ast.Ident); ok && id.Name == "_" {
		withValue = false
	}
	switch t := under(r.info.TypeOf(s.X)).(type) {
	case *types.Chan:
		r.rangeChan(s)
		return
	case *types.Map:
		r.mapAccess(s.X, false)
	case *types.Slice:
		if withValue {
			r.insert(s.X.Pos(), rtName+".LoadElems(")
			r.expr(s.X, value)
			r.insert(s.X.End(), ")")
		} else {
			r.expr(s.X, value)
		}
	case *types.Array:
		// Ranged with a value, the array is copied once, when the
		// loop starts: a load of all of it. Without one, only its
		// length is needed.
		if withValue {
			r.expr(s.X, value)
		} else {
			r.expr(s.X, location)
		}
	case *types.Pointer:
		_ = t
		r.expr(s.X, value)
	default:
		r.expr(s.X, value)
	}
	if s.Tok == token.ASSIGN {
		if s.Key != nil {
			r.store(s.Key, false)
		}
		if s.Value != nil {
			r.store(s.Value, false)
		}
	}
	r.stmt(s.Body)
}

// wrapLoad reports, when m is value and e is a shared location, a load of
// e around it; visit visits e's parts in between.
func (r *rewriter) wrapLoad(e ast.Expr, m mode, visit func()) {
	load := m == value && r.sharedLocation(e)
	if load {
		r.insert(e.Pos(), "(*"+rtName+".PlainLoad(&")
	}
	visit()
	if load {
		r.insert(e.End(), "))")
	}
}

// expr visits e in mode m.
func (r *rewriter) expr(e ast.Expr, m mode) {
	if e == nil {
		return
	}
	if tv, ok := r.info.Types[e]; ok && (tv.IsType() || tv.Value != nil) {
		return // a type, or a constant
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		r.expr(e.X, m)
	case *ast.Ident:
		r.wrapLoad(e, m, func() {})
	case *ast.FuncLit:
		r.stmt(e.Body)
	case *ast.CompositeLit:
		r.compositeLit(e)
	case *ast.SelectorExpr:
		r.selector(e, m)
	case *ast.IndexExpr:
		r.index(e, m)
	case *ast.IndexListExpr:
		// A generic function's instantiation.
	case *ast.SliceExpr:
		if _, ok := under(r.info.TypeOf(e.X)).(*types.Array); ok && r.addressable(e.X) {
			r.expr(e.X, location)
		} else {
			r.expr(e.X, value)
		}
		r.expr(e.Low, value)
		r.expr(e.High, value)
		r.expr(e.Max, value)
	case *ast.StarExpr:
		r.wrapLoad(e, m, func() { r.expr(e.X, value) })
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			r.expr(e.X, location)
		} else {
			r.expr(e.X, value)
		}
	case *ast.BinaryExpr:
		r.expr(e.X, value)
		r.expr(e.Y, value)
	case *ast.CallExpr:
		r.call(e)
	case *ast.TypeAssertExpr:
		r.expr(e.X, value)
	case *ast.KeyValueExpr:
		r.expr(e.Key, value)
		r.expr(e.Value, value)
	}
}

func (r *rewriter) addressable(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	return ok && tv.Addressable()
}

func (r *rewriter) compositeLit(e *ast.CompositeLit) {
	t := under(r.info.TypeOf(e))
	if p, ok := t.(*types.Pointer); ok {
		t = under(p.Elem())
	}
	_, isStruct := t.(*types.Struct)
	_, isMap := t.(*types.Map)
	for _, el := range e.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			r.expr(el, value)
			continue
		}
		if isMap {
			r.expr(kv.Key, value)
		}
		_ = isStruct // a struct's keys are field names, an array's constants
		r.expr(kv.Value, value)
	}
}

func (r *rewriter) selector(e *ast.SelectorExpr, m mode) {
	if r.qualified(e) != nil {
		r.wrapLoad(e, m, func() {})
		return
	}
	sel := r.info.Selections[e]
	if sel == nil {
		// A qualified function, type or constant, or what the type
		// checker could not tell.
		if id, ok := e.X.(*ast.Ident); ok {
			if _, ok := r.info.Uses[id].(*types.PkgName); ok {
				return
			}
		}
		r.expr(e.X, value)
		return
	}
	xt := r.info.TypeOf(e.X)
	switch sel.Kind() {
	case types.FieldVal:
		r.wrapLoad(e, m, func() {
			if isPointer(xt) || !r.addressable(e.X) {
				r.expr(e.X, value)
			} else {
				r.expr(e.X, location)
			}
		})
	case types.MethodVal:
		sig, _ := sel.Obj().Type().(*types.Signature)
		ptrRecv := sig != nil && sig.Recv() != nil && isPointer(sig.Recv().Type())
		switch {
		case types.IsInterface(xt):
			r.expr(e.X, value)
		case ptrRecv && !isPointer(xt) && r.addressable(e.X):
			// The receiver's address is taken: no access.
			r.expr(e.X, location)
		case !ptrRecv && isPointer(xt) && len(sel.Index()) == 1:
			// The method copies *x.
			r.insert(e.X.Pos(), "(*"+rtName+".PlainLoad(")
			r.expr(e.X, value)
			r.insert(e.X.End(), "))")
		case isPointer(xt) || !r.addressable(e.X):
			r.expr(e.X, value)
		case ptrRecv:
			r.expr(e.X, location)
		default:
			r.expr(e.X, value)
		}
	case types.MethodExpr:
	}
}

func (r *rewriter) index(e *ast.IndexExpr, m mode) {
	if tv, ok := r.info.Types[e.X]; ok && (tv.IsType() || isFunc(tv.Type)) {
		return // a generic function's or type's instantiation
	}
	switch t := under(r.info.TypeOf(e.X)).(type) {
	case *types.Map:
		r.mapAccess(e.X, false)
		r.expr(e.Index, value)
	case *types.Array:
		r.wrapLoad(e, m, func() {
			if r.addressable(e.X) {
				r.expr(e.X, location)
			} else {
				r.expr(e.X, value)
			}
			r.expr(e.Index, value)
		})
	case *types.Slice, *types.Pointer:
		_ = t
		r.wrapLoad(e, m, func() {
			r.expr(e.X, value)
			r.expr(e.Index, value)
		})
	default: // a string, a type parameter
		r.expr(e.X, value)
		r.expr(e.Index, value)
	}
}

func isFunc(t types.Type) bool {
	_, ok := under(t).(*types.Signature)
	return ok
}

func (r *rewriter) call(e *ast.CallExpr) {
	if tv, ok := r.info.Types[e.Fun]; ok && tv.IsType() {
		r.exprs(e.Args) // a conversion
		return
	}
	fun := ast.Unparen(e.Fun)
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		if b, ok := r.info.Uses[f].(*types.Builtin); ok {
			name = b.Name()
		}
	case *ast.SelectorExpr:
		if b, ok := r.info.Uses[f.Sel].(*types.Builtin); ok {
			name = "unsafe." + b.Name()
		}
	}
	switch name {
	case "":
		r.expr(e.Fun, value)
		r.exprs(e.Args)
	case "len", "cap":
		switch t := under(r.info.TypeOf(e.Args[0])).(type) {
		case *types.Array:
			// len of an array is constant, or its operand is
			// evaluated for its calls alone.
		case *types.Pointer:
			_ = t
		case *types.Map:
			r.mapAccess(e.Args[0], false)
		default:
			r.exprs(e.Args)
		}
	case "delete":
		r.mapAccess(e.Args[0], true)
		r.exprs(e.Args[1:])
	case "clear":
		if _, ok := under(r.info.TypeOf(e.Args[0])).(*types.Map); ok {
			r.mapAccess(e.Args[0], true)
		} else {
			r.exprs(e.Args)
		}
	case "new", "make":
		r.exprs(e.Args[1:])
	case "unsafe.Sizeof", "unsafe.Alignof", "unsafe.Offsetof":
	default:
		r.exprs(e.Args)
	}
}
