package generate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/explore/rewrite"
)

// The explored copy of a rewritten file (primitive.rewritten: impl/credits's
// owner.go). Such a file is no table: it runs the table from goroutines of
// its own, over channels, a ticker and a context, which the tables' seam
// does not reach. Its copy is made the way tollgate explore makes code
// nobody here wrote explorable (explore/rewrite): sync/atomic and sync go
// to their switch-point twins (explore/atomic, explore/sync), every go
// statement, channel operation, select, timer and context function to
// explore/rt, and every plain access of shared memory is reported to the
// race detector. The file is type-checked with the rest of its package of
// impl/, so the rewrite knows every type it meets.
//
// The copy lives beside the table files' copies, so that it drives the
// explored table (its Owner holds an explored *Table). What the file
// declares for callers (the exported errors, HandlerPanic, and methods of
// the value types, which the copy cannot redeclare on aliases) is aliased
// to impl's instead: the copy's errors are impl's errors.

// rewrittenCopy returns the copy of the rewritten file target (holding
// src) of prim.
func rewrittenCopy(root, mod string, prim primitive, target string, src []byte) ([]byte, error) {
	dir := filepath.Join(root, filepath.FromSlash(prim.dir()))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	ctx := build.Default
	var srcs []rewrite.Source
	at := -1
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := ctx.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		text := src
		if name != path0base(target) {
			if text, err = os.ReadFile(filepath.Join(dir, name)); err != nil {
				return nil, err
			}
		} else {
			at = len(srcs)
		}
		srcs = append(srcs, rewrite.Source{Name: filepath.Join(dir, name), Src: text})
	}
	if at < 0 {
		return nil, fmt.Errorf("%s: not in its package's build", target)
	}
	loadsImporterOnce.Do(initLoadsImporter)
	outs, _, err := rewrite.Package(mod+"/"+prim.dir(), "", srcs, loadsImporter)
	if err != nil {
		return nil, err
	}
	return aliasValues(root, mod, prim, outs[at].Text)
}

func path0base(target string) string { return filepath.Base(filepath.FromSlash(target)) }

// aliasValues removes from a rewritten file what it declares for callers
// (exported package-level variables, exported types and their methods,
// methods of the primitive's value types) and declares instead aliases of
// impl's.
func aliasValues(root, mod string, prim primitive, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "copy.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	valueTypes, err := valueTypeNames(root, prim)
	if err != nil {
		return nil, err
	}
	a := &aliaser{fset: fset, prim: prim, exportedTypes: exportedTypeNames(f)}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if err := a.genDecl(d); err != nil {
				return nil, err
			}
		case *ast.FuncDecl:
			if d.Recv == nil {
				continue
			}
			if r := recvName(d.Recv.List[0].Type); a.exportedTypes[r] || slices.Contains(valueTypes, r) {
				a.drop(d, d.Doc)
			}
		}
	}
	out := slices.Clone(src)
	for i := len(a.cut) - 1; i >= 0; i-- {
		e := a.cut[i]
		out = slices.Concat(out[:e.start], out[e.end:])
	}
	var b bytes.Buffer
	b.Write(out)
	fmt.Fprintf(&b, "\n// The errors and types this file declares for its callers are impl/%s's.\n", prim.name)
	if len(a.vars) > 0 {
		fmt.Fprintf(&b, "var (\n\t%s\n)\n", strings.Join(a.vars, "\n\t"))
	}
	for _, t := range a.typs {
		fmt.Fprintf(&b, "\ntype %s\n", t)
	}
	res := b.Bytes()
	// The import of impl's package, on the package clause's line (no line moves).
	pkgEnd := fset.Position(f.Name.End()).Offset
	res = slices.Concat(res[:pkgEnd], []byte(fmt.Sprintf("; import %s %q", prim.name, mod+"/"+prim.dir())), res[pkgEnd:])
	return dropUnusedImports(res)
}

// exportedTypeNames are the exported types f declares without type
// parameters.
func exportedTypeNames(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.IsExported() && ts.TypeParams == nil {
					out[ts.Name.Name] = true
				}
			}
		}
	}
	return out
}

// An aliaser gathers what aliasValues cuts from a file (cut) and the
// aliases it declares instead (vars, typs).
type aliaser struct {
	fset          *token.FileSet
	prim          primitive
	exportedTypes map[string]bool
	cut           []edit
	vars, typs    []string
}

// drop cuts n and its doc comment.
func (a *aliaser) drop(n ast.Node, doc *ast.CommentGroup) {
	start := n.Pos()
	if doc != nil {
		start = doc.Pos()
	}
	a.cut = append(a.cut, edit{a.fset.Position(start).Offset, a.fset.Position(n.End()).Offset, ""})
}

// genDecl cuts a declaration of exported variables or of an exported
// type and aliases impl's in its place.
func (a *aliaser) genDecl(d *ast.GenDecl) error {
	switch d.Tok {
	case token.VAR:
		var exp, unexp int
		for _, s := range d.Specs {
			for _, id := range s.(*ast.ValueSpec).Names {
				if id.IsExported() {
					a.vars = append(a.vars, fmt.Sprintf("%s = %s.%s", id.Name, a.prim.name, id.Name))
					exp++
				} else {
					unexp++
				}
			}
		}
		if exp > 0 && unexp > 0 {
			return fmt.Errorf("a var declaration mixes exported and unexported variables")
		}
		if exp > 0 {
			a.drop(d, d.Doc)
		}
	case token.TYPE:
		for _, s := range d.Specs {
			if ts := s.(*ast.TypeSpec); a.exportedTypes[ts.Name.Name] {
				if len(d.Specs) != 1 {
					return fmt.Errorf("type %s is declared in a group", ts.Name.Name)
				}
				a.typs = append(a.typs, fmt.Sprintf("%s = %s.%s", ts.Name.Name, a.prim.name, ts.Name.Name))
				a.drop(d, d.Doc)
			}
		}
	}
	return nil
}

// dropUnusedImports removes the imports res no longer uses (those only
// the removed declarations used) and formats it.
func dropUnusedImports(res []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "copy.go", res, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var cut []edit
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name != "_" && !used[name] {
			cut = append(cut, edit{fset.Position(imp.Pos()).Offset, fset.Position(imp.End()).Offset, ""})
		}
	}
	for i := len(cut) - 1; i >= 0; i-- {
		res = slices.Concat(res[:cut[i].start], res[cut[i].end:])
	}
	return format.Source(res)
}

// recvName is the name of a method's receiver type (T of *T[P]).
func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	return typeName(e)
}

// valueTypeNames are the exported types of prim's value-type files.
func valueTypeNames(root string, prim primitive) ([]string, error) {
	v, err := readValues(root, prim)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range v.types {
		name, _, _ := strings.Cut(t, " ")
		name, _, _ = strings.Cut(name, "[")
		out = append(out, name)
	}
	return out, nil
}
