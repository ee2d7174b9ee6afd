package generate

import (
	"go/ast"
	"go/token"
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
