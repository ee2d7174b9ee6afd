package generate

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

// Bounds checks in the explored copies. The token bucket's trie reads its
// nodes through unsafe pointer arithmetic (a child word of an inner node
// by unsafe.Add, a node as a cell by conversion). A mistake there reads
// past an object into whatever the allocator put next, which an explored
// run would not notice. So in a file that imports the hooked seam every
// allocation is reported (new(T) and &T{...} become seam.Alloc(…)), every
// unsafe.Add becomes seam.UnsafeAdd, and every conversion of an
// unsafe.Pointer to a typed pointer, (*T)(p), becomes
// (*T)(seam.UnsafeCast[T](p)): the explorer judges each against the object
// it points into (internal/interleave/bounds.go) and fails the run at the step
// that left its object.

// boundsChecks returns the edits that put those calls into f.
func boundsChecks(fset *token.FileSet, f *ast.File, src []byte) []edit {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	var edits []edit
	wrap := func(n ast.Node, open string) {
		edits = append(edits, edit{off(n.Pos()), off(n.Pos()), open}, edit{off(n.End()), off(n.End()), ")"})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.UnaryExpr:
			if _, lit := n.X.(*ast.CompositeLit); lit && n.Op == token.AND {
				wrap(n, "seam.Alloc(")
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				wrap(n, "seam.Alloc(")
			}
			if isUnsafe(n.Fun, "Add") {
				sel := n.Fun.(*ast.SelectorExpr)
				edits = append(edits, edit{off(sel.Pos()), off(sel.End()), "seam.UnsafeAdd"})
			}
			// (*T)(p) with p an unsafe.Pointer: a conversion whose
			// argument is unsafe.Pointer(…) or unsafe.Add(…).
			if par, ok := n.Fun.(*ast.ParenExpr); ok && len(n.Args) == 1 {
				if star, ok := par.X.(*ast.StarExpr); ok {
					if arg, ok := n.Args[0].(*ast.CallExpr); ok && (isUnsafe(arg.Fun, "Pointer") || isUnsafe(arg.Fun, "Add")) {
						wrap(arg, "seam.UnsafeCast["+text(star.X)+"](")
					}
				}
			}
		}
		return true
	})
	return edits
}

// isUnsafe reports whether e is unsafe.name.
func isUnsafe(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "unsafe" && sel.Sel.Name == name
}

// Named bounds. A package-level constant named max… (maxGen) is a bound of
// the code: in the explored copies every use of it outside a constant
// declaration reads it through seam.Bound("maxGen", maxGen), so that the
// explorer can lower it (hooked.Bounder) and run the code at its edge in a
// few operations. Uses inside a const declaration stay constant.
func namedBounds(fset *token.FileSet, f *ast.File) []edit {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	bounds := map[string]bool{}
	decl := map[*ast.Ident]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if isBoundName(n.Name) {
					bounds[n.Name] = true
					decl[n] = true
				}
			}
		}
	}
	if len(bounds) == 0 {
		return nil
	}
	var edits []edit
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			return n.Tok != token.CONST
		case *ast.Ident:
			if bounds[n.Name] && !decl[n] && n.Obj != nil && n.Obj.Kind == ast.Con {
				edits = append(edits, edit{off(n.Pos()), off(n.End()), fmt.Sprintf("seam.Bound(%q, %s)", n.Name, n.Name)})
			}
		}
		return true
	})
	return edits
}

// isBoundName reports whether a constant's name makes it a named bound:
// max followed by an upper-case letter.
func isBoundName(name string) bool {
	return len(name) > 3 && strings.HasPrefix(name, "max") && name[3] >= 'A' && name[3] <= 'Z'
}
