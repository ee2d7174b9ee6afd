// Package codecov measures which code of the tables the interleaving
// explorer reaches: it reads a Go coverage profile of a `tollgate explore`
// run built with -cover over the explored copies of impl/
// (internal/mutants/explored/...), names every basic block by its function
// and its first line of source (stable when lines move), and renders the
// table spec/explore-code-coverage.md commits: per function, the blocks
// reached, and every block not reached with the reason it cannot be
// (Reasons, from a committed file). scripts/explore-code-coverage.sh runs
// it; CI fails when the table changes or a block is left without a reason.
//
// It imports nothing of tollgate's: the profile and the source files are
// its only inputs.
package codecov

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Block is one basic block of a profile.
type Block struct {
	File      string // the profile's name: import path and file
	Func      string // the enclosing function or method (Recv.Name)
	Line      int    // its first line in the file measured
	Source    string // its source, spaces collapsed, cut at 72 characters
	Index     int    // 0 for the first block of Func with this Source, 1 for the next, …
	Stmts     int
	Covered   bool
	startCol  int
	startLine int
	endLine   int
	endCol    int
}

// Key names a block across runs and line moves: "Func: Source" and, when
// Func has more than one block with that source, "#Index".
func (b Block) Key() string {
	k := b.Func + ": " + b.Source
	if b.Index > 0 {
		k += " #" + strconv.Itoa(b.Index)
	}
	return k
}

// Parse reads a text coverage profile (go tool covdata textfmt, or
// -coverprofile) and keeps the blocks of files whose import path contains
// one of only. A block counted in any counter file of the profile is
// covered. root is the module's directory and mod its path: a profile names
// files by import path, and their source is read from root.
func Parse(r io.Reader, root, mod string, only []string) ([]Block, error) {
	type pos struct {
		file       string
		line, col  int
		eline, ecl int
	}
	seen := map[pos]*Block{}
	var order []pos
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if strings.HasPrefix(line, "mode:") {
				continue
			}
		}
		if line == "" {
			continue
		}
		// file:l.c,l.c stmts count
		colon := strings.LastIndex(line, ":")
		if colon < 0 {
			return nil, fmt.Errorf("codecov: a profile line without a file: %q", line)
		}
		file, rest := line[:colon], line[colon+1:]
		keep := false
		for _, o := range only {
			keep = keep || strings.Contains(file, o)
		}
		if !keep {
			continue
		}
		var p pos
		var stmts, count int
		if _, err := fmt.Sscanf(rest, "%d.%d,%d.%d %d %d", &p.line, &p.col, &p.eline, &p.ecl, &stmts, &count); err != nil {
			return nil, fmt.Errorf("codecov: %q: %v", line, err)
		}
		p.file = file
		if b := seen[p]; b != nil {
			b.Covered = b.Covered || count > 0
			continue
		}
		seen[p] = &Block{File: file, Line: p.line, Stmts: stmts, Covered: count > 0, startLine: p.line, startCol: p.col, endLine: p.eline, endCol: p.ecl}
		order = append(order, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	byFile := map[string][]*Block{}
	for _, p := range order {
		byFile[p.file] = append(byFile[p.file], seen[p])
	}
	var out []Block
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		rel := strings.TrimPrefix(strings.TrimPrefix(f, mod), "/")
		path := filepath.Join(root, filepath.FromSlash(rel))
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("codecov: the source of %s: %v", f, err)
		}
		if err := name(byFile[f], path, src); err != nil {
			return nil, err
		}
		bs := byFile[f]
		sort.Slice(bs, func(i, j int) bool {
			if bs[i].startLine != bs[j].startLine {
				return bs[i].startLine < bs[j].startLine
			}
			return bs[i].startCol < bs[j].startCol
		})
		count := map[string]int{}
		for _, b := range bs {
			k := b.Func + ": " + b.Source
			b.Index = count[k]
			count[k]++
			out = append(out, *b)
		}
	}
	return out, nil
}

// name fills Func and Source of the blocks of one file.
func name(bs []*Block, path string, src []byte) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return err
	}
	lines := strings.Split(string(src), "\n")
	type span struct {
		from, to int
		name     string
	}
	var funcs []span
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			n = recvName(fn.Recv.List[0].Type) + "." + n
		}
		funcs = append(funcs, span{fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line, n})
	}
	for _, b := range bs {
		b.Func = "(package)"
		for _, s := range funcs {
			if b.Line >= s.from && b.Line <= s.to {
				b.Func = s.name
			}
		}
		b.Source = excerpt(lines, b.startLine, b.startCol, b.endLine, b.endCol)
	}
	return nil
}

// excerpt is the source from line l0, column c0 to line l1, column c1
// (1-based, the end exclusive), spaces collapsed, cut at 72 characters.
func excerpt(lines []string, l0, c0, l1, c1 int) string {
	if l0 < 1 || l1 > len(lines) || l0 > l1 {
		return ""
	}
	var parts []string
	for l := l0; l <= l1; l++ {
		s := lines[l-1]
		from, to := 0, len(s)
		if l == l0 {
			from = min(max(c0-1, 0), len(s))
		}
		if l == l1 {
			to = min(max(c1-1, from), len(s))
		}
		parts = append(parts, s[from:to])
	}
	out := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	if r := []rune(out); len(r) > 72 {
		out = string(r[:71]) + "…"
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// Reasons maps a block's Key to why no explored scenario reaches it.
type Reasons map[string]string

// ReadReasons reads a reasons file: one block a line, "KEY\tREASON"; blank
// lines and lines starting with # are skipped.
func ReadReasons(r io.Reader) (Reasons, error) {
	out := Reasons{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, why, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("codecov: reasons line %d: want KEY<tab>REASON: %q", n, line)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("codecov: reasons line %d: %q listed twice", n, k)
		}
		out[k] = why
	}
	return out, sc.Err()
}

// Verdict is what a table found wrong: blocks not reached and not
// explained, and reasons that name no unreached block (stale: the block is
// reached now, or gone).
type Verdict struct {
	Unexplained []Block
	Stale       []string
}

// OK reports whether every unreached block has its reason and every reason
// its block.
func (v Verdict) OK() bool { return len(v.Unexplained) == 0 && len(v.Stale) == 0 }

// Table renders the blocks as markdown and judges them against reasons.
func Table(bs []Block, reasons Reasons, command string) (string, Verdict) {
	var v Verdict
	var b strings.Builder
	fmt.Fprintf(&b, "# Code coverage of the tables by the default explore run\n\n")
	fmt.Fprintf(&b, "Generated by `%s`; do not edit. Every basic block of the explored copies of impl/ that the default `tollgate explore` run (catalogue, directed and generated scenarios, DFS within 2 preemptions) executes, counted per function; every block it does not execute is listed with the reason no scenario can reach it (internal/interleave/codecov/testdata/unreached.txt). A block is counted when any part of an exploration runs it: a scenario's threads, its setup or the observations between steps.\n\n", command)
	type agg struct{ n, hit int }
	perFunc := map[string]*agg{}
	var funcs []string
	total, hit := 0, 0
	for _, x := range bs {
		k := shortFile(x.File) + " " + x.Func
		a := perFunc[k]
		if a == nil {
			a = &agg{}
			perFunc[k] = a
			funcs = append(funcs, k)
		}
		a.n++
		total++
		if x.Covered {
			a.hit++
			hit++
		}
	}
	fmt.Fprintf(&b, "%d of %d blocks reached (%.1f%%).\n\n", hit, total, 100*float64(hit)/float64(max(total, 1)))
	b.WriteString("| file | function | blocks reached |\n|---|---|---|\n")
	for _, k := range funcs {
		a := perFunc[k]
		file, fn, _ := strings.Cut(k, " ")
		mark := ""
		if a.hit < a.n {
			mark = " ◦"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %d / %d%s |\n", file, fn, a.hit, a.n, mark)
	}
	b.WriteString("\n## Blocks not reached\n\n| file | block | why no scenario reaches it |\n|---|---|---|\n")
	used := map[string]bool{}
	for _, x := range bs {
		if x.Covered {
			continue
		}
		why, ok := reasons[x.Key()]
		used[x.Key()] = true
		if !ok {
			why = "**no reason given: a gap**"
			v.Unexplained = append(v.Unexplained, x)
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", shortFile(x.File), strings.ReplaceAll(x.Key(), "|", `\|`), why)
	}
	for k := range reasons {
		if !used[k] {
			v.Stale = append(v.Stale, k)
		}
	}
	sort.Strings(v.Stale)
	return b.String(), v
}

// shortFile is a profile's file name without the module's explored prefix
// ("credits/credits.go").
func shortFile(f string) string {
	dir, file := filepath.Split(f)
	return filepath.Base(filepath.Clean(dir)) + "/" + file
}
