package sitepairs

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/exportdata"
)

// TestHashTouchesNoSharedMemory: the explorer replaces the trie's hash
// (spec/explore.md §8, "The trie's shape"), so impl/tokenbucket/hash.go
// never runs under a schedule. That loses no interleaving only while the
// hash shares nothing between threads: every function of hash.go reads
// its arguments and what its closure captured when it was made (the seed,
// a salt), names no package-level variable, and writes no variable
// declared outside itself. A memo of hashes, or any state the hash keeps
// between calls, breaks that and fails here: the explorer would then have
// to run the real hash.
func TestHashTouchesNoSharedMemory(t *testing.T) {
	dir := filepath.Join(root(t), "impl", "tokenbucket")
	fset := token.NewFileSet()
	var files []*ast.File
	var hash *ast.File
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		if name == "hash.go" {
			hash = f
		}
	}
	if hash == nil {
		t.Fatal("impl/tokenbucket/hash.go not found")
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	exports, err := exportdata.Files(root(t), "./impl/tokenbucket")
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: exportdata.Importer(fset, exports, nil)}
	pkg, err := conf.Check("github.com/tollgate/tollgate/impl/tokenbucket", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range sharedAccesses(fset, hash, info, pkg.Scope()) {
		t.Error(problem)
	}
}

// sharedAccesses lists, in f, every use of a package-level variable and
// every write, inside a function, to a variable declared outside it.
func sharedAccesses(fset *token.FileSet, f *ast.File, info *types.Info, pkgScope *types.Scope) []string {
	var out []string
	for id, obj := range info.Uses {
		if v, ok := obj.(*types.Var); ok && v.Parent() == pkgScope && fset.File(id.Pos()) == fset.File(f.Pos()) {
			out = append(out, fset.Position(id.Pos()).String()+": reads or writes the package-level variable "+id.Name)
		}
	}
	var funcs []ast.Node // the enclosing functions, innermost last
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		if n == nil {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			funcs = append(funcs, x)
			ast.Inspect(body(x), visit)
			funcs = funcs[:len(funcs)-1]
			return false
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				for _, l := range x.Lhs {
					out = append(out, outerWrite(fset, info, funcs, l)...)
				}
			}
		case *ast.IncDecStmt:
			out = append(out, outerWrite(fset, info, funcs, x.X)...)
		}
		return true
	}
	ast.Inspect(f, visit)
	return out
}

func body(n ast.Node) ast.Node {
	switch x := n.(type) {
	case *ast.FuncDecl:
		return x.Body
	case *ast.FuncLit:
		return x.Body
	}
	return nil
}

// outerWrite reports a write to a variable declared outside the innermost
// function of funcs (a captured variable), or through a pointer.
func outerWrite(fset *token.FileSet, info *types.Info, funcs []ast.Node, lhs ast.Expr) []string {
	if len(funcs) == 0 {
		return nil
	}
	inner := funcs[len(funcs)-1]
	switch x := ast.Unparen(lhs).(type) {
	case *ast.Ident:
		if x.Name == "_" {
			return nil
		}
		obj := info.Uses[x]
		if obj == nil || (obj.Pos() >= inner.Pos() && obj.Pos() < inner.End()) {
			return nil
		}
		return []string{fset.Position(x.Pos()).String() + ": writes " + x.Name + ", declared outside the function that writes it"}
	default:
		return []string{fset.Position(lhs.Pos()).String() + ": writes through a pointer, a field or an element"}
	}
}
