package generate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
)

// values are the declarations of a primitive's value-type files that a
// mutant aliases, in source order.
type values struct {
	types  []string // alias declarations: "Entry[P any] = credits.Entry[P]"
	consts []string // "Slots = credits.Slots"
	// structs maps each exported struct type to its field names in order.
	structs map[string][]string
}

// readValues parses prim's value-type files.
func readValues(root string, prim primitive) (*values, error) {
	v := &values{structs: map[string][]string{}}
	fset := token.NewFileSet()
	for _, base := range prim.values {
		name := prim.dir() + "/" + base
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(name)), nil, 0)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != prim.name {
			return nil, fmt.Errorf("generate: %s is package %s, not %s", name, f.Name.Name, prim.name)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					alias, err := typeAlias(fset, prim.name, s)
					if err != nil {
						return nil, err
					}
					v.types = append(v.types, alias)
					if st, ok := s.Type.(*ast.StructType); ok {
						v.structs[s.Name.Name] = fieldNames(st)
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if !id.IsExported() {
							continue
						}
						if g.Tok != token.CONST {
							return nil, fmt.Errorf("generate: %s: exported variable %s cannot be aliased; move it out of the value-type files", name, id.Name)
						}
						v.consts = append(v.consts, fmt.Sprintf("%s = %s.%s", id.Name, prim.name, id.Name))
					}
				}
			}
		}
	}
	return v, nil
}

// fieldNames lists a struct's fields in order (an embedded field is named
// by its type).
func fieldNames(st *ast.StructType) []string {
	var out []string
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			t := f.Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if sel, ok := t.(*ast.SelectorExpr); ok {
				t = sel.Sel
			}
			out = append(out, typeName(t))
			continue
		}
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
	}
	return out
}

// typeAlias returns the alias declaration of s for package pkg, keeping its
// type parameters: "Entry[P any] = credits.Entry[P]".
func typeAlias(fset *token.FileSet, pkg string, s *ast.TypeSpec) (string, error) {
	if s.TypeParams == nil {
		return fmt.Sprintf("%s = %s.%s", s.Name.Name, pkg, s.Name.Name), nil
	}
	var params, args []string
	for _, f := range s.TypeParams.List {
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		var constraint bytes.Buffer
		if err := printer.Fprint(&constraint, fset, f.Type); err != nil {
			return "", err
		}
		params = append(params, strings.Join(names, ", ")+" "+constraint.String())
		args = append(args, names...)
	}
	return fmt.Sprintf("%s[%s] = %s.%s[%s]", s.Name.Name, strings.Join(params, ", "), pkg, s.Name.Name, strings.Join(args, ", ")), nil
}

// aliasesFile declares m's package doc and, for every exported type and
// constant of its primitive's value-type files, an alias of impl's.
func aliasesFile(mod string, m Mutant, prim primitive, v *values) ([]byte, error) {
	doc := fmt.Sprintf("Package %[1]s is the %[2]s mutant of %[3]s: its table files with %[4]s applied, "+
		"on internal/seam/hooked so that the interleaving explorer can drive it. "+
		"It is deliberately broken, for tollgate's checkers only. Its value types and constants are aliases of %[3]s's, "+
		"so its tables satisfy the interfaces of internal/sut exactly as the real table does.",
		prim.name, m.Name(), prim.dir(), m.Patch)
	return aliasesSource(header(m), doc, mod, prim, v)
}

// exploredAliases is aliasesFile for the patch-less copy of prim.
func exploredAliases(mod string, prim primitive, v *values) ([]byte, error) {
	head := exploredHeader(prim)
	doc := fmt.Sprintf("Package %[1]s is %[2]s's table files, unchanged but for importing internal/seam/hooked "+
		"instead of internal/seam: the real code, with every atomic operation a switch point of the interleaving "+
		"explorer (internal/interleave). Its value types and constants are aliases of %[2]s's.", prim.name, prim.dir())
	if len(prim.rewritten) > 0 {
		doc += fmt.Sprintf(" Beside them, the files %s, which run the table from goroutines of their own, are rewritten as "+
			"tollgate explore rewrites code (explore/rewrite): their goroutines, channels, select, timers, contexts "+
			"and atomics are the explorer's too, and their plain accesses are checked for data races.",
			strings.Join(prim.rewritten, ", "))
	}
	return aliasesSource(head, doc, mod, prim, v)
}

// exploredHeader is the first line of the files of the patch-less copy of
// prim that are not copies of one of its files (aliases.go, LayoutFile).
func exploredHeader(prim primitive) string {
	return fmt.Sprintf("// Code generated by go run ./%s/gen from %s; DO NOT EDIT.\n", MutantsDir, prim.dir())
}

func aliasesSource(head, doc, mod string, prim primitive, v *values) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(head)
	fmt.Fprintf(&b, "\n%spackage %s\n\nimport %q\n", comment(doc), prim.name, mod+"/"+prim.dir())
	if len(v.types) > 0 {
		fmt.Fprintf(&b, "\n// The value types of %s (%s).\ntype (\n%s\n)\n", prim.dir(), strings.Join(prim.values, ", "), strings.Join(v.types, "\n"))
	}
	if len(v.consts) > 0 {
		fmt.Fprintf(&b, "\n// The constants of %s.\nconst (\n%s\n)\n", prim.dir(), strings.Join(v.consts, "\n"))
	}
	return format.Source(b.Bytes())
}

// comment formats text as a // comment wrapped at 77 columns.
func comment(text string) string {
	var b strings.Builder
	line := "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 77 && line != "//" {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}
