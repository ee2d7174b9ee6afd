package generate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"strconv"
	"strings"
)

// LayoutFile is the file of every hooked copy (ExploredDir's and each
// mutant's) that describes its table to the interleaving explorer: the
// methods of internal/layout, written against the copy's own
// fields, so that a field of impl/ renamed without the explorer fails to
// compile instead of failing an exploration.
const LayoutFile = "layout.go"

// explorerWords are the words at fixed places in each primitive's Table, as
// the explorer names them (an index is written []): internal/interleave
// classifies and renders words by these names (coverage.go, credits.go).
// layoutFile finds the words in the Table's declaration, as the explorer
// used to by reflection, and fails unless they are exactly these: a word
// renamed, added or removed in impl/ fails go generate until both lists
// agree.
var explorerWords = map[string][]string{
	"credits":     {"slots[].word", "slots[].holder", "slots[].box", "closed"},
	"tokenbucket": {"buckets"},
}

// layoutTemplates are the rest of each primitive's LayoutFile: the methods
// of layout.Boxes and layout.Tries, which read fields by name.
var layoutTemplates = map[string]string{
	"credits": `
var _ layout.Boxes = (*tableLayout[int])(nil)

// Box implements layout.Boxes.
func (*tableLayout[P]) Box(v any) (layout.Box, bool) {
	b, ok := v.(*box[P])
	if !ok || b == nil {
		return layout.Box{}, ok
	}
	return layout.Box{Gen: b.gen, Payload: b.payload, MarkedMs: b.markedMs, Fields: []layout.Field{
		{Name: "gen", Addr: unsafe.Pointer(&b.gen)},
		{Name: "markedMs", Addr: unsafe.Pointer(&b.markedMs)},
		{Name: "payload", Addr: unsafe.Pointer(&b.payload)},
		{Name: "published", Addr: unsafe.Pointer(&b.published)},
	}}, true
}
`,
	"tokenbucket": `
var _ layout.Tries = (*tableLayout[string])(nil)

// Buckets implements layout.Tries.
func (l *tableLayout[K]) Buckets() unsafe.Pointer { return unsafe.Pointer(&l.buckets) }

// Trie implements layout.Tries.
func (l *tableLayout[K]) Trie() unsafe.Pointer { return unsafe.Pointer(hooked.Peek(&l.buckets)) }

// IsTrie implements layout.Tries.
func (*tableLayout[K]) IsTrie(v any) (unsafe.Pointer, bool) {
	t, ok := v.(*trie[K])
	return unsafe.Pointer(t), ok
}

// SetHash implements layout.Tries.
func (*tableLayout[K]) SetHash(t unsafe.Pointer, hash func(string) uint64) {
	h, ok := any(hash).(func(K) uint64)
	if !ok {
		panic(fmt.Sprintf("layout: the explorer's hash is of string keys, this table's keys are %T", *new(K)))
	}
	(*trie[K])(t).hash = h
}

// Root implements layout.Tries.
func (*tableLayout[K]) Root(t unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer((*trie[K])(t).root)
}

// Floor implements layout.Tries.
func (*tableLayout[K]) Floor(t unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(&(*trie[K])(t).floor)
}

// Sealed implements layout.Tries.
func (*tableLayout[K]) Sealed(t unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer((*trie[K])(t).sealed)
}

// Frozen implements layout.Tries.
func (*tableLayout[K]) Frozen(t unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer((*trie[K])(t).frozen)
}

// Fanout implements layout.Tries.
func (*tableLayout[K]) Fanout(level int) int { return int(fanoutAt(uint(level))) }

// Index implements layout.Tries.
func (*tableLayout[K]) Index(h uint64, level int) int { return int(index(h, uint(level))) }

// First implements layout.Tries.
func (*tableLayout[K]) First(n unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(hooked.Peek(&(*node[K])(n).first))
}

// Child implements layout.Tries.
func (*tableLayout[K]) Child(n unsafe.Pointer, j int) (word, child unsafe.Pointer) {
	w := (*inner[K])(n).kid(uint64(j))
	return unsafe.Pointer(w), unsafe.Pointer(hooked.Peek(w))
}

// IsNode implements layout.Tries.
func (*tableLayout[K]) IsNode(v any) (unsafe.Pointer, bool) {
	switch n := v.(type) {
	case *node[K]: // a child word's value
		return unsafe.Pointer(n), true
	case *cell[K]: // a chain word's value
		return unsafe.Pointer(n), true
	}
	return nil, false
}

// Key implements layout.Tries.
func (*tableLayout[K]) Key(c unsafe.Pointer) string { return fmt.Sprint((*cell[K])(c).key) }

// Next implements layout.Tries.
func (*tableLayout[K]) Next(c unsafe.Pointer) (word, next unsafe.Pointer) {
	if n := (*node[K])(c); hooked.Peek(&n.first) != n {
		w := &(*wrapper[K])(c).value // a frozen wrapper
		return unsafe.Pointer(w), unsafe.Pointer(hooked.Peek(w))
	}
	w := &(*cell[K])(c).next
	return unsafe.Pointer(w), unsafe.Pointer(hooked.Peek(w))
}

// State implements layout.Tries.
func (*tableLayout[K]) State(c unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(&(*cell[K])(c).word)
}

// LoadState implements layout.Tries.
func (*tableLayout[K]) LoadState(c unsafe.Pointer) (lo, hi uint64) {
	return (*cell[K])(c).word.Load()
}
`,
}

// layoutFile returns prim's LayoutFile, headed by head, for the table files
// srcs (by base name; a mutant's are patched).
func layoutFile(head, mod string, prim primitive, srcs map[string][]byte) ([]byte, error) {
	fset := token.NewFileSet()
	types := map[string][]*ast.TypeSpec{}
	for _, base := range prim.tables {
		name := prim.dir() + "/" + base
		f, err := parser.ParseFile(fset, name, srcs[base], 0)
		if err != nil {
			return nil, err
		}
		if seam := seamName(mod, f); seam != "seam" {
			return nil, fmt.Errorf("generate: %s imports internal/seam as %q; the explorer's layout needs it as seam", name, seam)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					types[ts.Name.Name] = append(types[ts.Name.Name], ts)
				}
			}
		}
	}
	specs := types["Table"]
	if len(specs) != 1 {
		return nil, fmt.Errorf("generate: %s declares Table %d times in its table files, not once", prim.dir(), len(specs))
	}
	table := specs[0]
	if table.TypeParams == nil || len(table.TypeParams.List) != 1 || len(table.TypeParams.List[0].Names) != 1 {
		return nil, fmt.Errorf("generate: %s.Table has not one type parameter", prim.name)
	}
	var constraint bytes.Buffer
	if err := printer.Fprint(&constraint, fset, table.TypeParams.List[0].Type); err != nil {
		return nil, err
	}
	w := &wordWalk{types: types}
	w.walk(table.Type, "", "l", nil)
	want := explorerWords[prim.name]
	if strings.Join(w.patterns, " ") != strings.Join(want, " ") {
		return nil, fmt.Errorf("generate: the explorer names the words %s of %s.Table, which holds %s instead: "+
			"a word was renamed, added or removed; name it in internal/interleave and in explorerWords (%s/internal/generate/layout.go)",
			strings.Join(want, ", "), prim.name, orElse(strings.Join(w.patterns, ", "), "none"), MutantsDir)
	}

	param := map[string]string{"credits": "P", "tokenbucket": "K"}[prim.name]
	var b bytes.Buffer
	b.WriteString(head)
	fmt.Fprintf(&b, "\npackage %s\n\nimport (\n", prim.name)
	std, own := []string{`"unsafe"`}, []string{strconv.Quote(mod + "/internal/layout")}
	if w.loops > 0 || prim.name == "tokenbucket" {
		std = append([]string{`"fmt"`}, std...)
	}
	if prim.name == "tokenbucket" {
		own = append(own, strconv.Quote(mod+"/internal/seam/hooked"))
	}
	fmt.Fprintf(&b, "%s\n\n%s\n)\n", strings.Join(std, "\n"), strings.Join(own, "\n"))
	fmt.Fprintf(&b, `
// Layout describes t to the interleaving explorer (internal/layout).
func (t *Table[%[1]s]) Layout() layout.Layout { return (*tableLayout[%[1]s])(t) }

var _ layout.Table = (*Table[%[4]s])(nil)

// tableLayout is a Table as the explorer sees it.
type tableLayout[%[1]s %[2]s] Table[%[1]s]

// Base implements layout.Layout.
func (l *tableLayout[%[1]s]) Base() unsafe.Pointer { return unsafe.Pointer(l) }

// Words implements layout.Layout.
func (l *tableLayout[%[1]s]) Words() []layout.Word {
	var w []layout.Word
%[3]s	return w
}
`, param, constraint.String(), w.code.String(), map[string]string{"credits": "int", "tokenbucket": "string"}[prim.name])
	b.WriteString(layoutTemplates[prim.name])
	return format.Source(b.Bytes())
}

// seamName is the name f imports internal/seam under, "" if it does not.
func seamName(mod string, f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == mod+"/internal/seam" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "seam"
		}
	}
	return "seam" // no seam words in this file
}

// wordWalk finds the words at fixed places in a struct type, as reflection
// over the struct would: through its fields, embedded ones (named by the
// struct holding them) and arrays, but not through pointers, and writes the
// code that lists them.
type wordWalk struct {
	types    map[string][]*ast.TypeSpec
	patterns []string // each word's name, with [] for each index
	code     bytes.Buffer
	loops    int
}

// walk visits type t of the value named name (a Go format string with one
// %d per index in idx) and reached by the expression access.
func (w *wordWalk) walk(t ast.Expr, name, access string, idx []string) {
	switch t := t.(type) {
	case *ast.ParenExpr:
		w.walk(t.X, name, access, idx)
	case *ast.IndexExpr:
		if kind, ok := seamType(t.X); ok && kind == "Pointer" {
			w.word("PointerWord", name, access, idx)
			return
		}
		w.walk(t.X, name, access, idx)
	case *ast.IndexListExpr:
		w.walk(t.X, name, access, idx)
	case *ast.SelectorExpr:
		if kind, ok := seamType(t); ok && kind != "Pointer" {
			w.word(kind+"Word", name, access, idx)
		}
	case *ast.Ident:
		for _, s := range w.types[t.Name] { // several under build tags: stats
			if s.Assign == 0 {
				w.walk(s.Type, name, access, idx)
			}
		}
	case *ast.ArrayType:
		if t.Len == nil {
			return // a slice: its elements are not in the struct
		}
		i := fmt.Sprintf("i%d", len(idx))
		fmt.Fprintf(&w.code, "for %s := range %s {\n", i, access)
		w.loops++
		w.walk(t.Elt, name+"[%d]", access+"["+i+"]", append(idx, i))
		w.code.WriteString("}\n")
	case *ast.StructType:
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 { // embedded: named by the struct holding it
				w.walk(f.Type, name, access+"."+embeddedName(f.Type), idx)
				continue
			}
			for _, n := range f.Names {
				if n.Name == "_" {
					continue
				}
				field := n.Name
				if name != "" {
					field = name + "." + n.Name
				}
				w.walk(f.Type, field, access+"."+n.Name, idx)
			}
		}
	}
}

// word lists one word: a call of constructor (layout.PointerWord, …).
func (w *wordWalk) word(constructor, name, access string, idx []string) {
	w.patterns = append(w.patterns, strings.ReplaceAll(name, "%d", ""))
	label := strconv.Quote(name)
	if len(idx) > 0 {
		label = fmt.Sprintf("fmt.Sprintf(%s, %s)", label, strings.Join(idx, ", "))
	}
	fmt.Fprintf(&w.code, "w = append(w, layout.%s(%s, &%s))\n", constructor, label, access)
}

// seamType reports whether t is a type of internal/seam (seam.Pair,
// seam.Pointer, …) and which.
func seamType(t ast.Expr) (string, bool) {
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "seam" {
		return "", false
	}
	switch sel.Sel.Name {
	case "Pointer", "Uint64", "Bool", "Pair":
		return sel.Sel.Name, true
	}
	return "", false
}

// embeddedName is the field name of an embedded field of type t.
func embeddedName(t ast.Expr) string {
	switch x := t.(type) {
	case *ast.StarExpr:
		return embeddedName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.IndexExpr:
		return embeddedName(x.X)
	case *ast.IndexListExpr:
		return embeddedName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}
