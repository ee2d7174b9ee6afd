package generate

import (
	"fmt"
	"go/ast"
	"go/token"
)

// Plain stores as switch points. Go's atomics are the only switch points
// the hooked seam has of itself, so a plain store would run inside the step
// of the seam operation before it: no schedule could run another thread
// between that operation and the store. For a data-race-free table that
// loses nothing (every plain access is ordered by the atomics around it),
// but a bug that writes a field after publishing its object (a box filled
// after the compare-and-swap that installed it) is a race that only such a
// schedule shows. So the explored copies call seam.PlainStore(&x) before
// every store that may reach shared memory, and the explorer treats that
// step as dependent on every step of every other thread (the loads that
// could see the store are plain too and are not switch points: see
// spec/explore.md §4).
//
// Which stores: every assignment (=, op=, ++, --) to an expression that is
// not a plain local variable: a field or element reached through a
// pointer, slice or map, or a dereference. A store to a variable named
// alone that another thread may reach, a package-level variable or one a
// function literal captured, needs the types to tell: plainLoads marks it
// (identStores). A store is
// left alone only when it provably writes memory of the running call
// itself: its root is a local declared by `var x T` of an array or struct
// type (or a composite literal of one), or a local pointer taken as the
// address of such a local (c := &s.General). A store that qualifies outside
// a statement list (an if or for header) is refused, so that no store is
// ever silently left out.

// plainStores returns the insertions that put a seam.PlainStore call before
// every qualifying store of f (see above). structs names the package's
// struct types (their values are not pointers); src is f's text.
func plainStores(fset *token.FileSet, f *ast.File, src []byte, structs map[string]bool) ([]edit, error) {
	var edits []edit
	var bad error
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		private := privateLocals(fn, structs)
		inList := stmtsInLists(fn.Body)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if bad != nil {
				return false
			}
			var lhs []ast.Expr
			switch s := n.(type) {
			case *ast.AssignStmt:
				if s.Tok != token.DEFINE {
					lhs = s.Lhs
				}
			case *ast.IncDecStmt:
				lhs = []ast.Expr{s.X}
			default:
				return true
			}
			var calls string
			for _, e := range lhs {
				if shared(e, private) {
					calls += "seam.PlainStore(" + addressOf(e, src, fset) + "); "
				}
			}
			if calls == "" {
				return true
			}
			st := n.(ast.Stmt)
			if !inList[st] {
				bad = fmt.Errorf("line %d: a store that may reach shared memory outside a statement list; move it into the block so the explorer can see it", fset.Position(st.Pos()).Line)
				return false
			}
			at := fset.Position(st.Pos()).Offset
			edits = append(edits, edit{at, at, calls})
			return true
		})
		if bad != nil {
			return nil, bad
		}
	}
	return edits, nil
}

// stmtsInLists is every statement of body that stands in a statement
// list (a block, a case), where a call can be put in front of it.
func stmtsInLists(body *ast.BlockStmt) map[ast.Stmt]bool {
	inList := map[ast.Stmt]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			for _, s := range n.List {
				inList[s] = true
			}
		case *ast.CaseClause:
			for _, s := range n.Body {
				inList[s] = true
			}
		case *ast.CommClause:
			for _, s := range n.Body {
				inList[s] = true
			}
		}
		return true
	})
	return inList
}

// addressOf is the source of &e: p itself for a dereference *p.
func addressOf(e ast.Expr, src []byte, fset *token.FileSet) string {
	text := func(x ast.Expr) string {
		return string(src[fset.Position(x.Pos()).Offset:fset.Position(x.End()).Offset])
	}
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	if star, ok := e.(*ast.StarExpr); ok {
		return text(star.X)
	}
	return "&" + text(e)
}

// shared reports whether storing to e may write memory another thread can
// reach.
func shared(e ast.Expr, private map[string]bool) bool {
	if _, ok := e.(*ast.Ident); ok {
		// A variable named alone: a package-level or captured one is
		// plainLoads' to mark, with the types (sharedIdent).
		return false
	}
	return !ownPlace(e, private)
}

// ownPlace reports whether e names memory of the running call: a private
// local, a field of one, an element of a private local array (or of the
// array a private local pointer points to). An element reached through a
// field (s.list[i]) may be a slice's, which is shared.
func ownPlace(e ast.Expr, private map[string]bool) bool {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return private[x.Name]
		case *ast.SelectorExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			id, ok := x.X.(*ast.Ident)
			return ok && private[id.Name]
		case *ast.StarExpr:
			id, ok := x.X.(*ast.Ident)
			return ok && private[id.Name]
		default:
			return false
		}
	}
}

// privateLocals names fn's locals whose every declaration makes them the
// call's own memory (see the comment at the top). A name declared in any
// other way anywhere in fn (a parameter, a := of anything else) is not.
func privateLocals(fn *ast.FuncDecl, structs map[string]bool) map[string]bool {
	l := &locals{verdict: map[string]bool{}, structs: structs}
	for _, fl := range []*ast.FieldList{fn.Recv, fn.Type.Params, fn.Type.Results} {
		l.markFields(fl)
	}
	// Two passes, so that c := &s.General sees s's verdict whatever the
	// order of the declarations.
	for pass := 0; pass < 2; pass++ {
		ast.Inspect(fn.Body, l.visit)
	}
	return l.verdict
}

// locals is privateLocals' verdict so far: a name is the call's own while
// every declaration of it seen makes it so.
type locals struct {
	verdict map[string]bool
	structs map[string]bool // the package's struct types
}

func (l *locals) mark(name string, own bool) {
	if prev, ok := l.verdict[name]; ok {
		own = own && prev
	}
	l.verdict[name] = own
}

// markFields marks the names of a parameter or result list as not the
// call's own.
func (l *locals) markFields(fl *ast.FieldList) {
	if fl == nil {
		return
	}
	for _, fld := range fl.List {
		for _, n := range fld.Names {
			l.mark(n.Name, false)
		}
	}
}

// valueType reports whether t is a type whose values are copied whole:
// an array, a struct.
func (l *locals) valueType(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.ArrayType:
		return t.Len != nil
	case *ast.StructType:
		return true
	}
	return l.structs[typeName(t)]
}

func (l *locals) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.ValueSpec:
		for _, id := range n.Names {
			l.mark(id.Name, n.Type != nil && l.valueType(n.Type))
		}
	case *ast.AssignStmt:
		if n.Tok == token.DEFINE {
			l.define(n)
		}
	case *ast.RangeStmt:
		for _, e := range []ast.Expr{n.Key, n.Value} {
			if id, ok := e.(*ast.Ident); ok && n.Tok == token.DEFINE {
				l.mark(id.Name, false)
			}
		}
	case *ast.FuncLit:
		l.markFields(n.Type.Params)
	}
	return true
}

// define marks the names a := declares.
func (l *locals) define(n *ast.AssignStmt) {
	for i, e := range n.Lhs {
		id, ok := e.(*ast.Ident)
		if !ok || id.Name == "_" {
			continue
		}
		own := false
		if len(n.Rhs) == len(n.Lhs) {
			own = ownValue(n.Rhs[i], l.verdict, l.valueType)
		}
		l.mark(id.Name, own)
	}
}

// ownValue reports whether e, assigned to a new local, makes that local
// the call's own memory: a composite literal of a value type, or the
// address of (a field or element of) a private local.
func ownValue(e ast.Expr, verdict map[string]bool, valueType func(ast.Expr) bool) bool {
	switch e := e.(type) {
	case *ast.CompositeLit:
		return e.Type != nil && valueType(e.Type)
	case *ast.UnaryExpr:
		if e.Op != token.AND {
			return false
		}
		if _, lit := e.X.(*ast.CompositeLit); lit {
			return false // &T{...} is a new heap object that may be published
		}
		return ownPlace(e.X, verdict)
	}
	return false
}
