package house

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxComplexity is the most decisions one function may take (issue 32:
// each function reads as one idea). A function above it is split along
// its cases.
const maxComplexity = 25

// complexity is the cyclomatic complexity of a function body, counted as
// gocyclo counts it: 1, plus one for each if, for, range, case and
// communication clause other than a default, and each && and ||.
func complexity(body ast.Node) int {
	n := 1
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// generated reports whether f is a generated file (go.dev/s/generatedcode).
func generated(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "// Code generated ") && strings.HasSuffix(c.Text, " DO NOT EDIT.") {
				return true
			}
		}
	}
	return false
}

// overComplex returns, for every function in the Go files of the module
// at root that git tracks (tests included, generated files not), one line
// per function above limit: "complexity file:line name".
func overComplex(root string, files []string, limit int) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if generated(f) {
			continue
		}
		ast.Inspect(f, func(x ast.Node) bool {
			var name string
			var body *ast.BlockStmt
			switch x := x.(type) {
			case *ast.FuncDecl:
				name, body = x.Name.Name, x.Body
				if x.Recv != nil && len(x.Recv.List) == 1 {
					name = recvName(x.Recv.List[0].Type) + "." + name
				}
			default:
				return true
			}
			if body == nil {
				return false
			}
			if c := complexity(body); c > limit {
				out = append(out, fmt.Sprintf("%d %s:%d %s", c, rel, fset.Position(x.Pos()).Line, name))
			}
			return false
		})
	}
	sort.Strings(out)
	return out, nil
}

// recvName is the type name of a method's receiver.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

// trackedGo lists the Go files git tracks under root.
func trackedGo(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "*.go")
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the complexity check reads the files git tracks; run it from a clone)", err)
	}
	return strings.Fields(string(b))
}

// TestComplexity: no function of the module, tests included, takes more
// than maxComplexity decisions (issue 32, item 5); the generated files
// are left out. The count is gocyclo's.
func TestComplexity(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	over, err := overComplex(root, trackedGo(t, root), maxComplexity)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range over {
		t.Errorf("above complexity %d: %s", maxComplexity, o)
	}
}

// TestComplexityCounts: the count on known shapes, so a miscount cannot
// let a function through.
func TestComplexityCounts(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"func f() {}", 1},
		{"func f(a, b bool) { if a && b || a {} }", 4},
		{"func f(x int) { switch x { case 1, 2: case 3: default: } }", 3},
		{"func f(c chan int) { for { select { case <-c: case c <- 1: default: } } }", 4},
		{"func f(s []int) { for range s { go func() { if true {} }() } }", 3},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+c.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := complexity(f.Decls[0].(*ast.FuncDecl).Body); got != c.want {
			t.Errorf("%s: complexity %d, want %d", c.src, got, c.want)
		}
	}
}
