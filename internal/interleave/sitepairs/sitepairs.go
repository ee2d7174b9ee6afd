// Package sitepairs states the interleaving coverage of the tables: the
// static pairs of access sites of the explored copies of impl/
// (internal/mutants/explored/...) that can touch one word, one of them a
// write, and which of them the default explore run covered in each order
// (internal/interleave's SitePairs, written by tollgate explore
// -site-pairs). It renders the table spec/explore-site-pairs.md commits;
// scripts/explore-site-pairs.sh runs it and CI fails when a pair loses its
// coverage.
//
// A site is one seam operation in the source (a method of a hooked word:
// Load, Store, CompareAndSwap, …; a plain load or store the generator
// marked: seam.PlainLoad, PlainWrite, PlainStore). Its word is named by
// what the source names: the struct field it selects (credits.slot.word,
// tokenbucket.cell.word), or, for a word reached through a local pointer,
// its type alone, which may alias any field of that type. Two sites can
// touch one word when their words have the same type and the same field,
// or one of them has no field.
package sitepairs

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/exportdata"
)

// Packages are the explored copies whose sites are paired, from the
// module root.
var Packages = []string{"internal/mutants/explored/credits", "internal/mutants/explored/tokenbucket"}

const hookedPath = "github.com/tollgate/tollgate/internal/seam/hooked"

// A Site is one seam operation in the source.
type Site struct {
	File   string // slash path from the module root
	Line   int
	Func   string // the enclosing function ("(*Table).Reserve")
	Source string // the line's text, spaces collapsed
	Op     string // the method or function ("CompareAndSwap", "PlainLoad")
	Type   string // the word's type ("seam.Pair")
	Field  string // "slot.word", or "" for a word reached through a pointer
	Write  bool   // the operation can write the word
}

// Key names the site across line moves: its package, function and
// source text.
func (s Site) Key() string {
	return path.Base(path.Dir(s.File)) + " " + s.Func + ": " + s.Source
}

func (s Site) word() string {
	if s.Field == "" {
		return s.Type
	}
	return s.Field
}

// writes are the operations that can write their word.
var writes = map[string]bool{
	"Store": true, "CompareAndSwap": true, "CompareAndSwapLo": true, "Swap": true,
	"Add": true, "And": true, "Or": true, "PlainStore": true, "PlainWrite": true,
}

// reads are the remaining operations on words.
var reads = map[string]bool{"Load": true, "LoadLo": true, "LoadHi": true, "PlainLoad": true}

// Static returns every site of the explored copies under root, in file
// and line order.
func Static(root string) ([]Site, error) {
	fset := token.NewFileSet()
	patterns := make([]string, len(Packages))
	for i, dir := range Packages {
		patterns[i] = "./" + dir
	}
	exports, err := exportdata.Files(root, patterns...)
	if err != nil {
		return nil, err
	}
	imp := exportdata.Importer(fset, exports, nil)
	var out []Site
	for _, dir := range Packages {
		sites, err := packageSites(root, dir, fset, imp)
		if err != nil {
			return nil, err
		}
		out = append(out, sites...)
	}
	return out, nil
}

func packageSites(root, dir string, fset *token.FileSet, imp types.Importer) ([]Site, error) {
	abs := filepath.Join(root, filepath.FromSlash(dir))
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	lines := map[string][]string{}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(abs, name); err != nil || !ok {
			continue
		}
		text, err := os.ReadFile(filepath.Join(abs, name))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, filepath.Join(abs, name), text, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		lines[filepath.Join(abs, name)] = strings.Split(string(text), "\n")
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check("github.com/tollgate/tollgate/"+dir, fset, files, info); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	live := reachable(info, files, fset)
	var out []Site
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !live[fn] {
				continue
			}
			name := funcName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				op, word, ok := seamOp(info, call)
				if !ok {
					return true
				}
				pos := fset.Position(call.Pos())
				src := lines[pos.Filename][pos.Line-1]
				s := Site{
					File:   dir + "/" + filepath.Base(pos.Filename),
					Line:   pos.Line,
					Func:   name,
					Source: collapse(src),
					Op:     op,
					Write:  writes[op],
				}
				s.Type, s.Field = wordOf(info, word)
				out = append(out, s)
				return true
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// seamOp reports whether call is a seam operation on a word, its name and
// the expression naming the word.
func seamOp(info *types.Info, call *ast.CallExpr) (op string, word ast.Expr, ok bool) {
	sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !isSel {
		if ix, isIx := ast.Unparen(call.Fun).(*ast.IndexExpr); isIx { // seam.PlainLoad[T](…)
			sel, isSel = ix.X.(*ast.SelectorExpr)
		}
		if !isSel {
			return "", nil, false
		}
	}
	name := sel.Sel.Name
	if s, isMethod := info.Selections[sel]; isMethod {
		// A method of a hooked word type.
		recv := s.Recv()
		if p, isPtr := recv.(*types.Pointer); isPtr {
			recv = p.Elem()
		}
		named, isNamed := recv.(*types.Named)
		if !isNamed || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != hookedPath || !(writes[name] || reads[name]) {
			return "", nil, false
		}
		return name, sel.X, true
	}
	obj := info.Uses[sel.Sel]
	if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != hookedPath || !strings.HasPrefix(name, "Plain") || len(call.Args) != 1 {
		return "", nil, false
	}
	arg := ast.Unparen(call.Args[0])
	if u, isAddr := arg.(*ast.UnaryExpr); isAddr && u.Op == token.AND {
		return name, u.X, true
	}
	return name, &ast.StarExpr{X: arg}, true
}

// wordOf names the word e denotes: its type, and the struct field it
// selects when it selects one (through indexes: t.slots[i].word is
// slot.word).
func wordOf(info *types.Info, e ast.Expr) (typ, field string) {
	if tv, ok := info.Types[e]; ok && tv.Type != nil {
		t := tv.Type
		if p, isPtr := t.(*types.Pointer); isPtr {
			t = p.Elem() // a word reached through a pointer to it
		}
		typ = types.TypeString(t, func(p *types.Package) string { return p.Name() })
	} else if star, isStar := e.(*ast.StarExpr); isStar {
		if tv, ok := info.Types[star.X]; ok {
			if p, isPtr := tv.Type.(*types.Pointer); isPtr {
				typ = types.TypeString(p.Elem(), func(p *types.Package) string { return p.Name() })
			}
		}
	}
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.IndexExpr:
			e = x.X
			continue
		case *ast.SelectorExpr:
			if s, ok := info.Selections[x]; ok && s.Kind() == types.FieldVal {
				recv := fieldOwner(s)
				owner := types.TypeString(recv, func(p *types.Package) string { return p.Name() })
				if i := strings.IndexByte(owner, '['); i >= 0 {
					owner = owner[:i]
				}
				return typ, owner + "." + x.Sel.Name
			}
		}
		return typ, ""
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, _ := t.(*ast.Ident)
	if id == nil {
		return fn.Name.Name
	}
	if star != "" {
		return "(*" + id.Name + ")." + fn.Name.Name
	}
	return id.Name + "." + fn.Name.Name
}

func collapse(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// A Pair is an ordered pair of sites that can touch one word, one of them
// a write: First's access, a switch of threads, then Then's.
type Pair struct{ First, Then Site }

// Universe returns every ordered pair of sites that can touch one word,
// one of them a write (a site with itself included: two threads at one
// compare-and-swap).
func Universe(sites []Site) []Pair {
	var out []Pair
	for _, a := range sites {
		for _, b := range sites {
			if !(a.Write || b.Write) || a.Type != b.Type || path.Dir(a.File) != path.Dir(b.File) {
				continue // no write, or two words, or two tables
			}
			if a.Field != "" && b.Field != "" && a.Field != b.Field {
				continue
			}
			out = append(out, Pair{a, b})
		}
	}
	return out
}

func pos(s Site) string { return s.File + ":" + strconv.Itoa(s.Line) }

// reachable returns the functions of files that a caller of the package
// can reach: its exported functions and methods, and every function they
// name, transitively. A function nothing names (one kept for the seam's
// inlining check) has no sites, and neither has the generated layout.go,
// which the explorer calls only with every thread paused.
func reachable(info *types.Info, files []*ast.File, fset *token.FileSet) map[*ast.FuncDecl]bool {
	decls := map[types.Object]*ast.FuncDecl{}
	var roots []*ast.FuncDecl
	for _, f := range files {
		layout := filepath.Base(fset.Position(f.Pos()).Filename) == "layout.go"
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if obj := info.Defs[fn.Name]; obj != nil {
				decls[obj] = fn
			}
			if fn.Name.IsExported() && !layout {
				roots = append(roots, fn)
			}
		}
	}
	live := map[*ast.FuncDecl]bool{}
	var visit func(fn *ast.FuncDecl)
	visit = func(fn *ast.FuncDecl) {
		if live[fn] {
			return
		}
		live[fn] = true
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				obj := info.Uses[id]
				if f, isFunc := obj.(*types.Func); isFunc {
					obj = f.Origin()
				}
				if d := decls[obj]; d != nil {
					visit(d)
				}
			}
			return true
		})
	}
	for _, fn := range roots {
		visit(fn)
	}
	return live
}

// fieldOwner is the struct type that declares the field s selects: through
// an embedded field (a cell's c.first is its node's first), the embedded
// type, so one word has one name however it is reached.
func fieldOwner(s *types.Selection) types.Type {
	t := s.Recv()
	idx := s.Index()
	for _, i := range idx[:len(idx)-1] {
		if p, isPtr := t.(*types.Pointer); isPtr {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			break
		}
		t = st.Field(i).Type()
	}
	if p, isPtr := t.(*types.Pointer); isPtr {
		t = p.Elem()
	}
	return t
}
