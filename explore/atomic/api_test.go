package atomic_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestAPI checks that this package exports what sync/atomic exports, no
// more and no less: every function, type and method, with the same
// parameter and result types, so that a file compiles unchanged when its
// import of sync/atomic is changed to this package.
func TestAPI(t *testing.T) {
	std, err := build.Default.Import("sync/atomic", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	own, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := exported(t, std.Dir, std.GoFiles)
	got := exported(t, own.Dir, own.GoFiles)
	if len(want) < 80 {
		t.Fatalf("found only %d exported names in sync/atomic (%s)", len(want), std.Dir)
	}
	for _, k := range sortedKeys(want) {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("missing: %s %s", k, want[k])
		case g != want[k]:
			t.Errorf("%s: got %s, sync/atomic has %s", k, g, want[k])
		}
	}
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok {
			t.Errorf("not in sync/atomic: %s %s", k, got[k])
		}
	}
}

// exported maps each exported top-level name of the files (a function,
// a type, a method as Type.Method) to its shape: a function's parameter
// and result types, a type's parameters and kind.
func exported(t *testing.T, dir string, files []string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	m := map[string]string{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				key := d.Name.Name
				if d.Recv != nil {
					recv := d.Recv.List[0].Type
					ptr := ""
					if s, ok := recv.(*ast.StarExpr); ok {
						ptr, recv = "*", s.X
					}
					switch r := recv.(type) {
					case *ast.IndexExpr:
						recv = r.X
					case *ast.IndexListExpr:
						recv = r.X
					}
					base := types.ExprString(recv)
					if !ast.IsExported(base) {
						continue
					}
					key = "(" + ptr + base + ")." + key
				}
				m[key] = "func" + fields(d.Type.Params) + " " + fields(d.Type.Results)
			case *ast.GenDecl:
				if d.Tok != token.TYPE {
					continue
				}
				for _, s := range d.Specs {
					s := s.(*ast.TypeSpec)
					if !s.Name.IsExported() {
						continue
					}
					kind := "type"
					switch s.Type.(type) {
					case *ast.StructType:
						kind = "struct"
					case *ast.InterfaceType:
						kind = "interface"
					}
					if s.Assign.IsValid() {
						kind = "alias"
					}
					if s.TypeParams != nil {
						kind = fields(s.TypeParams) + " " + kind
					}
					m["type "+s.Name.Name] = kind
				}
			}
		}
	}
	return m
}

// fields is the list of types of a parameter list, one per name:
// (a, b int32) is (int32, int32).
func fields(l *ast.FieldList) string {
	if l == nil {
		return "()"
	}
	var ts []string
	for _, f := range l.List {
		n := max(len(f.Names), 1)
		for range n {
			ts = append(ts, types.ExprString(f.Type))
		}
	}
	return "(" + strings.Join(ts, ", ") + ")"
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
