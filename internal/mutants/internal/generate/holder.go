package generate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A viewed file (primitive.viewed: impl/credits's holder.go) is a value
// file whose type's memory the table reads: a Holder's liveness flag,
// which Sweep loads and Exit stores. The explored copies alias Holder, so
// that the holders the explorer makes are those the sut interface passes;
// its memory is then impl's, outside the hooked copies. The view gives the
// explorer that memory all the same: the copy of holder.go declares the
// same struct under another name (holderView), its flag a
// seam.GluedBool (internal/seam/hooked: atomic.Bool's layout, whose
// operations are no switch points but are reported to the race detector),
// with the file's methods on it; viewOf reads a *Holder as its view, and
// the table copies call viewOf(h).Alive() where impl calls h.Alive().
// ExitHolder is the view's Exit, which the explorer calls for an exit
// (internal/sut's Credits.Exit). A plain store in place of Exit's atomic
// one (the concurrency campaign's cc-plain-store) is then a plain write
// the race detector orders against Sweep's load: the data race it is.
// Nothing is a switch point that was not one (spec/explore.md §6).

// viewType is the view's name for the file's type T: tView.
func viewType(t string) string { return strings.ToLower(t[:1]) + t[1:] + "View" }

// viewCopy returns the explored copy of the viewed file target, holding
// src: the file with its exported struct type renamed to its view, its
// package-level variables and functions dropped (NewHolder and the serials
// it counts: the explorer's holders are impl's), its seam.Bool words
// GluedBool, then copied as a table file is (copyTable), with viewOf and
// the exported functions of the view's methods that the explorer calls.
func viewCopy(mod, target string, src []byte, structs map[string][]string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, target, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var edits []edit
	var typ string
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	drop := func(n ast.Node, doc *ast.CommentGroup) {
		start := n.Pos()
		if doc != nil {
			start = doc.Pos()
		}
		edits = append(edits, edit{off(start), off(n.End()), ""})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			switch d.Tok {
			case token.TYPE:
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					if _, ok := ts.Type.(*ast.StructType); !ok || !ts.Name.IsExported() {
						continue
					}
					if typ != "" {
						return nil, fmt.Errorf("a viewed file declares two struct types, %s and %s", typ, ts.Name.Name)
					}
					typ = ts.Name.Name
					edits = append(edits, edit{off(ts.Name.Pos()), off(ts.Name.End()), viewType(typ)})
				}
			case token.VAR:
				drop(d, d.Doc)
			}
		case *ast.FuncDecl:
			if d.Recv == nil {
				drop(d, d.Doc)
				continue
			}
			r := d.Recv.List[0].Type
			if s, ok := r.(*ast.StarExpr); ok {
				r = s.X
			}
			if id, ok := r.(*ast.Ident); ok {
				edits = append(edits, edit{off(id.Pos()), off(id.End()), viewType(id.Name)})
			}
		}
	}
	if typ == "" {
		return nil, fmt.Errorf("a viewed file declares no exported struct type")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "seam" && sel.Sel.Name == "Bool" {
				edits = append(edits, edit{off(sel.Sel.Pos()), off(sel.Sel.End()), "GluedBool"})
			}
		}
		return true
	})
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })
	out := slices.Clone(src)
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		out = slices.Concat(out[:e.start], []byte(e.text), out[e.end:])
	}
	body, err := copyTable("", mod, target, out, structs)
	if err != nil {
		return nil, err
	}
	v := viewType(typ)
	var b bytes.Buffer
	b.Write(body)
	fmt.Fprintf(&b, `
// viewOf is h's memory as the explorer sees it: its %[2]s.
func viewOf(h *%[1]s) *%[2]s { return (*%[2]s)(unsafe.Pointer(h)) }

// A %[2]s is a %[1]s: the same fields, of the same sizes, in the same order.
var (
	_ [unsafe.Sizeof(%[2]s{}) - unsafe.Sizeof(%[1]s{})]struct{}
	_ [unsafe.Sizeof(%[1]s{}) - unsafe.Sizeof(%[2]s{})]struct{}
)

// Exit%[1]s is h.Exit() on its view: what the explorer calls for an exit.
func Exit%[1]s(h *%[1]s) { viewOf(h).Exit() }
`, typ, v)
	res := b.Bytes()
	if !bytes.Contains(res, []byte(`"unsafe"`)) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, target, res, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		at := fset.Position(f.Name.End()).Offset
		res = slices.Concat(res[:at], []byte("\n\nimport \"unsafe\""), res[at:])
	}
	return dropUnusedImports(res)
}

// viewCalls returns the table copy src with every call x.Alive() (a
// method of a viewed type; the table files call no other) made on x's view:
// viewOf(x).Alive().
func viewCalls(src []byte, methods []string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "copy.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var edits []edit
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || len(c.Args) != 0 {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || !slices.Contains(methods, sel.Sel.Name) {
			return true
		}
		x0, x1 := fset.Position(sel.X.Pos()).Offset, fset.Position(sel.X.End()).Offset
		edits = append(edits, edit{x0, x0, "viewOf("}, edit{x1, x1, ")"})
		return true
	})
	out := slices.Clone(src)
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		out = slices.Concat(out[:e.start], []byte(e.text), out[e.end:])
	}
	return out, nil
}

// viewedMethods are the methods of the viewed files of prim that use a
// seam word (Holder.Alive, Holder.Exit): the calls the table copies make
// of them go to the view.
func viewedMethods(root string, prim primitive) ([]string, error) {
	var out []string
	for _, base := range prim.viewed {
		name := prim.dir() + "/" + base
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return nil, err
		}
		words := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if fl, ok := n.(*ast.Field); ok {
				if sel, ok := fl.Type.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "seam" {
						for _, nm := range fl.Names {
							words[nm.Name] = true
						}
					}
				}
			}
			return true
		})
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil {
				continue
			}
			uses := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && words[sel.Sel.Name] {
					uses = true
				}
				return !uses
			})
			if uses {
				out = append(out, fn.Name.Name)
			}
		}
	}
	return out, nil
}
