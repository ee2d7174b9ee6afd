// Package rewrite computes the overlay tollgate explore builds code under
// test with: every Go file of the package under test and of the packages
// it imports (outside the standard library and outside tollgate itself)
// replaced by a copy whose sync/atomic, sync and time calls go to the
// explorer's switch-point twins (explore/atomic, explore/sync, explore/rt).
// The source on disk is never changed; the go command's -overlay flag
// compiles the copies in place of the originals.
//
// A file is rewritten by byte edits of its text, never by printing its
// syntax tree again, and no edit inserts a newline: every line keeps its
// number, so panics, stack traces and the file:line of a failure point at
// the original source. The edits are:
//
//   - the import of "sync/atomic" imports explore/atomic instead;
//   - sync.Mutex, sync.RWMutex, sync.Once, sync.WaitGroup, sync.Cond,
//     sync.NewCond, sync.Pool, sync.Map, sync.OnceFunc, sync.OnceValue and
//     sync.OnceValues become explore/sync's;
//   - every plain load and store of memory another thread may reach (a
//     field through a pointer, an element of a slice, a pointer's target,
//     a package-level variable, a local variable captured by a function
//     literal or whose address is taken; fields and elements of such a
//     struct or array) is reported to the explorer with its address, where
//     Go makes it: x becomes (*rt.PlainLoad(&x)), x = v becomes
//     *rt.PlainWrite(&x) = v, and a map's index, len, delete and range
//     report an access of the map (access.go says how, form by form);
//   - time.Now, time.Since, time.Until, time.Sleep, and the timers
//     time.NewTimer, time.After, time.AfterFunc, time.NewTicker and
//     time.Tick become explore/rt's; a call of Stop or Reset on a
//     *time.Timer or a *time.Ticker becomes rt.TimerStop(t) (TimerReset,
//     TickerStop, TickerReset), t evaluated first (timer.go);
//   - context.WithCancel, WithCancelCause, WithTimeout, WithTimeoutCause,
//     WithDeadline, WithDeadlineCause, AfterFunc and Cause become
//     explore/rt's twins (AfterFunc is rt.ContextAfterFunc);
//   - a go statement becomes rt.Go (its function value and arguments
//     evaluated at the statement), ch <- v rt.Send(ch)(v), <-ch rt.Recv(ch)
//     (rt.Recv2 for v, ok := <-ch), close(ch) rt.Close(ch), len(ch)
//     rt.Len(ch), a range over a channel a loop over rt.Range, and a
//     select the same select over the channels rt.SelRecv and rt.SelSend
//     give its cases (chan.go); make and cap of a channel stay as they are;
//   - before a construct the explorer cannot control (runtime.Gosched,
//     runtime.Goexit, runtime.LockOSThread, reflect.Select, a method
//     value or method expression of a timer's Stop or Reset, or their
//     call on a timer that is not a *time.Timer or *time.Ticker, a go
//     statement of a builtin or of a generic function whose type
//     arguments are inferred, and in a file older than go1.18 every go
//     statement, channel operation and select) a call of
//     rt.Unsupported naming it is put at the start of the statement that
//     holds it, on the same line;
//   - the imports the edits need are added on the package clause's line,
//     and an import of sync, time, runtime or context left unused becomes
//     a blank import.
//
// Each construct the explorer cannot control is also reported as a Note,
// with its position, before anything runs. A trap runs where its
// statement starts, so it may fire for a construct that would not have
// run: a deferred call's is hit at the defer statement, an else-if
// condition's at the first if, a loop's post statement's before the loop.
//
// Test files are not rewritten: they run as written, and a test that
// hands its own sync.Mutex to a rewritten function taking a *sync.Mutex
// does not compile. The files of a package are type-checked together
// (Package; File checks one file alone) for the accesses, the ranges over
// channels and the lengths of channels; a range over a channel whose type
// is unknown (a type error) is not seen. The variable of a range over a
// channel is declared in the loop's body (per iteration, as from go1.22
// on), and a store to an assigned one is not reported. A plain access that is not
// reported: the stores that append and copy make to a slice's elements, a
// shared variable redeclared by :=, the embedded pointers a promoted
// field is reached through; a store to a map's element, and a store whose
// right-hand side calls a function but whose type differs from the
// location's (an interface), are reported before the right-hand side runs.
package rewrite

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Import paths of the twins and of tollgate itself.
const (
	atomicTwin = "github.com/tollgate/tollgate/explore/atomic"
	syncTwin   = "github.com/tollgate/tollgate/explore/sync"
	rtTwin     = "github.com/tollgate/tollgate/explore/rt"
	selfModule = "github.com/tollgate/tollgate"
)

// Local names the rewritten code refers to the twins by.
const (
	syncName = "tgsync_"
	rtName   = "tgrt_"
)

// A Note is something the rewrite reports about the code.
type Note struct {
	// Pos is where: file:line:col with the file's absolute path (for a
	// whole file, its path; for a whole package, its directory).
	Pos  string
	What string
	// Unsupported: the explorer cannot control the construct; a run
	// that reaches it ends with it named.
	Unsupported bool
}

// The selectors of sync the twin replaces.
var syncTwinned = map[string]bool{
	"Mutex": true, "RWMutex": true, "Once": true, "WaitGroup": true,
	"OnceFunc": true, "OnceValue": true, "OnceValues": true, "Cond": true, "NewCond": true,
	"Pool": true, "Map": true,
}

// The selectors of time explore/rt replaces.
var timeTwinned = map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true,
	"After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}

// The selectors of context explore/rt replaces, with the name of the
// twin.
var contextTwinned = map[string]string{"WithCancel": "WithCancel", "WithCancelCause": "WithCancelCause",
	"WithTimeout": "WithTimeout", "WithTimeoutCause": "WithTimeoutCause",
	"WithDeadline": "WithDeadline", "WithDeadlineCause": "WithDeadlineCause",
	"AfterFunc": "ContextAfterFunc", "Cause": "Cause"}

// The selectors of runtime and reflect the explorer cannot control.
var (
	runtimeTrapped = map[string]bool{"Gosched": true, "Goexit": true, "LockOSThread": true}
	reflectTrapped = map[string]bool{"Select": true}
)

// File rewrites the source of one Go file, src, named filename (the
// name notes and traps give), type-checked alone, as a package of its own
// (what it refers to in its package's other files has no type, and
// accesses of unknown type are not reported: Package rewrites a whole
// package). It returns the rewritten text, the notes, and whether anything
// changed; when nothing did, out is src.
func File(filename string, src []byte) (out []byte, notes []Note, changed bool, err error) {
	outs, notes, err := Package("", "", []Source{{filename, src}}, nil)
	if err != nil {
		return nil, nil, false, err
	}
	return outs[0].Text, notes, outs[0].Changed, nil
}

// Source is one Go file of a package: its name (notes and traps give it)
// and its text.
type Source struct {
	Name string
	Src  []byte
}

// Output is a rewritten file: its text, and whether it changed (when it
// did not, Text is the Source's).
type Output struct {
	Text    []byte
	Changed bool
}

// Package rewrites the Go files of one package, with import path path,
// which are type-checked together with imp importing what they import
// (nil: go/importer's default, which reads the go command's export
// data). goVersion is the language version of the package's module ("":
// the newest). A type error does not stop the rewrite: it is a note, and
// the accesses whose types are unknown are not reported.
//
// The reports of plain accesses are calls of generic functions, which a
// file older than go1.18 cannot make: in such a file a store to shared
// memory gets a switch point before its statement instead
// (rt.PlainStore, with no address), and its accesses are not reported,
// which a note says.
func Package(path, goVersion string, files []Source, imp types.Importer) ([]Output, []Note, error) {
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(fset, f.Name, f.Src, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		parsed = append(parsed, af)
	}
	if imp == nil {
		imp = importer.Default()
	}
	info := &types.Info{
		FileVersions: map[*ast.File]string{},
		Types:        map[ast.Expr]types.TypeAndValue{},
		Uses:         map[*ast.Ident]types.Object{},
		Defs:         map[*ast.Ident]types.Object{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
	}
	var typeErr error
	conf := types.Config{Importer: imp, GoVersion: langVersion(goVersion), Error: func(err error) {
		if typeErr == nil {
			typeErr = err
		}
	}, FakeImportC: true}
	if path == "" {
		path = "p"
	}
	conf.Check(path, fset, parsed, info)
	shared := collectShared(info, parsed)

	var outs []Output
	var notes []Note
	if typeErr != nil && len(files) > 1 {
		notes = append(notes, Note{Pos: filepath.Dir(files[0].Name), What: "type-checking: " + typeErr.Error() + " (accesses of unknown type are not reported)"})
	}
	for i, f := range parsed {
		src := files[i].Src
		r := &rewriter{
			fset:       fset,
			tf:         fset.File(f.Pos()),
			base:       filepath.Base(files[i].Name),
			dir:        filepath.Base(filepath.Dir(files[i].Name)),
			src:        src,
			pkgPath:    path,
			commOps:    map[ast.Node]bool{},
			f:          f,
			info:       info,
			sharedVars: shared,
			imports:    map[string]string{},
			uses:       map[string]int{},
			twinned:    map[string]int{},
			trapped:    map[ast.Stmt]bool{},
			generics:   generics(info.FileVersions[f]),
		}
		if !r.generics {
			r.note(f.Package, "a file of "+info.FileVersions[f]+": its plain accesses are not reported (the reports need go1.18); a store to shared memory is a switch point instead", false)
		}
		r.scanImports()
		r.walk()
		r.accesses()
		// The closings of the channel rewrites go after every other edit
		// at their offset, the innermost first.
		for k := len(r.late) - 1; k >= 0; k-- {
			r.edits = append(r.edits, r.late[k])
		}
		r.blankUnused()
		r.addImports()
		sort.SliceStable(r.notes, func(i, j int) bool { return r.notes[i].off < r.notes[j].off })
		for _, n := range r.notes {
			notes = append(notes, n.Note)
		}
		if len(r.edits) == 0 {
			outs = append(outs, Output{Text: src})
			continue
		}
		out, err := apply(src, r.edits)
		if err == nil {
			err = check(files[i].Name, src, out, fset.Position(f.Package).Line)
		}
		if err != nil {
			return nil, nil, err
		}
		outs = append(outs, Output{Text: out, Changed: true})
	}
	return outs, notes, nil
}

// An edit replaces src[off:end] with text; off == end inserts.
type edit struct {
	off, end int
	text     string
}

type note struct {
	Note
	off int
}

type rewriter struct {
	fset *token.FileSet
	tf   *token.File
	base string // the file's base name, for traps
	dir  string // the base name of its directory, for the sites of go statements
	f    *ast.File
	src  []byte
	// pkgPath is the package's import path.
	pkgPath string
	// commOps are the sends and receives that are a select's cases.
	commOps map[ast.Node]bool
	// late are edits that close a channel rewrite: they go after every
	// other edit at their offset (chan.go).
	late []edit

	// imports maps the local names of the file's imports of sync, time,
	// runtime, context and reflect to their paths.
	imports map[string]string
	// uses counts the selectors of each local name left as they are;
	// twinned counts those sent to a twin.
	uses, twinned map[string]int
	// trapped holds the statements a trap is put before.
	trapped map[ast.Stmt]bool
	// info is the package's type information; sharedVars its local
	// variables that are captured or have their address taken.
	info       *types.Info
	sharedVars map[*types.Var]bool
	// generics: the file's language version has generics (go1.18).
	generics bool

	needSync, needRT bool
	edits            []edit
	notes            []note
}

func (r *rewriter) off(p token.Pos) int { return r.tf.Offset(p) }

// pos renders p as file:line:col, on the file's own lines (not those of
// //line directives).
func (r *rewriter) pos(p token.Pos) token.Position { return r.fset.PositionFor(p, false) }

func (r *rewriter) note(p token.Pos, what string, unsupported bool) {
	r.notes = append(r.notes, note{Note{Pos: r.pos(p).String(), What: what, Unsupported: unsupported}, r.off(p)})
}

func (r *rewriter) replace(n ast.Node, text string) {
	r.edits = append(r.edits, edit{r.off(n.Pos()), r.off(n.End()), text})
}

// scanImports sends the import of sync/atomic to the twin and records the
// local names of sync, time and runtime.
func (r *rewriter) scanImports() {
	for _, spec := range r.f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := ""
		if spec.Name != nil {
			name = spec.Name.Name
		}
		switch path {
		case "sync/atomic":
			switch name {
			case ".":
				r.note(spec.Pos(), "dot import of sync/atomic: its atomics are not explored", true)
			case "_":
				r.note(spec.Pos(), "blank import of sync/atomic", true)
			default:
				r.replace(spec.Path, strconv.Quote(atomicTwin))
			}
		case "sync", "time", "runtime", "context", "reflect":
			switch name {
			case ".":
				r.note(spec.Pos(), "dot import of "+path+": its uses are not rewritten", true)
			case "_":
			case "":
				r.imports[path] = path
			default:
				r.imports[name] = path
			}
		}
	}
}

// walk visits every node with its ancestors.
func (r *rewriter) walk() {
	var stack []ast.Node
	ast.Inspect(r.f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		r.visit(n, stack)
		return true
	})
}

// visit rewrites or traps n; stack holds n and its ancestors.
func (r *rewriter) visit(n ast.Node, stack []ast.Node) {
	switch n := n.(type) {
	case *ast.GoStmt:
		if !r.goStmt(n) {
			r.unsupported(n.Pos(), "go statement", stack)
		}
	case *ast.SelectStmt:
		if !r.selectStmt(n) {
			r.unsupported(n.Pos(), "select statement", stack)
		}
	case *ast.SendStmt:
		if !r.commOps[n] && !r.sendStmt(n) {
			r.unsupported(n.Pos(), "channel send", stack)
		}
	case *ast.UnaryExpr:
		if n.Op == token.ARROW && !r.commOps[n] && !r.recvExpr(n, stack) {
			r.unsupported(n.Pos(), "channel receive", stack)
		}
	case *ast.CallExpr:
		r.builtinCall(n, stack)
	case *ast.SelectorExpr:
		r.twinSelector(n, stack)
		r.timerMethod(n, stack)
	case *ast.AssignStmt:
		if !r.generics && n.Tok != token.DEFINE && r.anyShared(n.Lhs) {
			r.plainStore(n, stack)
		}
	case *ast.IncDecStmt:
		if !r.generics && r.anyShared([]ast.Expr{n.X}) {
			r.plainStore(n, stack)
		}
	}
}

// builtinCall rewrites or traps a call of the builtins that reach a
// channel: close, make of a channel, len of one.
func (r *rewriter) builtinCall(n *ast.CallExpr, stack []ast.Node) {
	fun, ok := n.Fun.(*ast.Ident)
	if !ok || fun.Obj != nil {
		return
	}
	if b, ok := r.info.Uses[fun].(*types.Builtin); r.info.Uses[fun] != nil && (!ok || b.Name() != fun.Name) {
		return // not the builtin
	}
	switch fun.Name {
	case "close":
		if !r.generics {
			r.unsupported(n.Pos(), "close of a channel", stack)
		} else {
			r.replace(fun, rtName+".Close")
			r.needRT = true
		}
	case "make":
		if len(n.Args) > 0 && !r.generics {
			if _, ok := ast.Unparen(n.Args[0]).(*ast.ChanType); ok {
				r.unsupported(n.Pos(), "make of a channel", stack)
			}
		}
	case "len":
		if len(n.Args) == 1 && r.generics {
			if ch, ok := under(r.info.TypeOf(n.Args[0])).(*types.Chan); ok {
				name := ".Len"
				if ch.Dir() == types.SendOnly {
					name = ".LenSend"
				}
				r.replace(fun, rtName+name)
				r.needRT = true
			}
		}
	}
}

// anyShared reports whether one of lhs is a shared location or a map's
// element.
func (r *rewriter) anyShared(lhs []ast.Expr) bool {
	for _, l := range lhs {
		l = ast.Unparen(l)
		if ix, ok := l.(*ast.IndexExpr); ok {
			if _, ok := under(r.info.TypeOf(ix.X)).(*types.Map); ok {
				return true
			}
		}
		if r.sharedLocation(l) {
			return true
		}
	}
	return false
}

// plainStore puts a switch point (rt.PlainStore) before the statement s,
// which stores to shared memory, in a file whose accesses are not
// reported, when s sits directly in a statement list.
func (r *rewriter) plainStore(s ast.Stmt, stack []ast.Node) {
	if anchor(stack) != s {
		return
	}
	r.needRT = true
	off := r.off(s.Pos())
	r.edits = append(r.edits, edit{off, off, rtName + ".PlainStore(); "})
}

// langVersion is the language version of a module's go line for the
// type checker ("1.15" is "go1.15"; "" stays "").
func langVersion(v string) string {
	if v == "" {
		return ""
	}
	return "go" + strings.TrimPrefix(v, "go")
}

// generics reports whether Go version v (go1.N, or "": the newest) has
// generics.
func generics(v string) bool {
	minor, ok := strings.CutPrefix(v, "go1.")
	if !ok {
		return true
	}
	minor, _, _ = strings.Cut(minor, ".")
	n, err := strconv.Atoi(minor)
	return err != nil || n >= 18
}

// twinSelector handles X.Sel where X names the file's import of sync, time or
// runtime.
func (r *rewriter) twinSelector(n *ast.SelectorExpr, stack []ast.Node) {
	x, ok := n.X.(*ast.Ident)
	if !ok || x.Obj != nil {
		return
	}
	path, ok := r.imports[x.Name]
	if !ok {
		return
	}
	sel := n.Sel.Name
	switch {
	case path == "sync" && syncTwinned[sel]:
		r.replace(x, syncName)
		r.needSync = true
		r.twinned[x.Name]++
		return
	case path == "time" && timeTwinned[sel]:
		r.replace(x, rtName)
		r.needRT = true
		r.twinned[x.Name]++
		return
	case path == "context" && contextTwinned[sel] != "":
		r.replace(n, rtName+"."+contextTwinned[sel])
		r.needRT = true
		r.twinned[x.Name]++
		return
	}
	r.uses[x.Name]++
	switch {
	case path == "runtime" && runtimeTrapped[sel], path == "reflect" && reflectTrapped[sel]:
		r.unsupported(n.Pos(), path+"."+sel, stack)
	}
}

// unsupported notes a construct the explorer cannot control at p and puts
// a trap before the innermost statement of a statement list that holds
// it, unless that statement has one already. A construct outside any
// function (a package-level initializer) is only noted.
func (r *rewriter) unsupported(p token.Pos, what string, stack []ast.Node) {
	r.note(p, what, true)
	s := anchor(stack)
	if s == nil || r.trapped[s] {
		return
	}
	r.trapped[s] = true
	site := fmt.Sprintf("%s:%d", r.base, r.pos(p).Line)
	r.needRT = true
	off := r.off(s.Pos())
	r.edits = append(r.edits, edit{off, off, fmt.Sprintf("%s.Unsupported(%s, %s); ", rtName, strconv.Quote(site), strconv.Quote(what))})
}

// anchor returns the innermost statement of stack that sits directly in
// a statement list (a block's, or a case's body), or nil.
func anchor(stack []ast.Node) ast.Stmt {
	for i := len(stack) - 1; i > 0; i-- {
		s, ok := stack[i].(ast.Stmt)
		if !ok {
			continue
		}
		switch parent := stack[i-1].(type) {
		case *ast.BlockStmt:
			switch s.(type) {
			case *ast.CaseClause, *ast.CommClause:
				// A switch's or select's clause: not a statement
				// one can put another before.
			default:
				return s
			}
		case *ast.CaseClause:
			return s
		case *ast.CommClause:
			if ast.Node(parent.Comm) != s {
				return s
			}
		}
	}
	return nil
}

// blankUnused turns an import of sync, time or runtime whose every use
// went to a twin into a blank import, so the file still compiles.
func (r *rewriter) blankUnused() {
	for _, spec := range r.f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := path
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if r.imports[name] != path || r.twinned[name] == 0 || r.uses[name] > 0 {
			continue
		}
		start := spec.Path.Pos()
		if spec.Name != nil {
			start = spec.Name.Pos()
		}
		r.edits = append(r.edits, edit{r.off(start), r.off(spec.Path.End()), "_ " + spec.Path.Value})
	}
}

// addImports imports the twins the edits use, on the package clause's
// line.
func (r *rewriter) addImports() {
	var specs []string
	if r.needSync {
		specs = append(specs, syncName+" "+strconv.Quote(syncTwin))
	}
	if r.needRT {
		specs = append(specs, rtName+" "+strconv.Quote(rtTwin))
	}
	if len(specs) == 0 {
		return
	}
	off := r.off(r.f.Name.End())
	r.edits = append(r.edits, edit{off, off, "; import (" + strings.Join(specs, "; ") + ")"})
}

// apply makes edits to src. Insertions at an offset go before a
// replacement starting there, in the order they were made.
func apply(src []byte, edits []edit) ([]byte, error) {
	sort.SliceStable(edits, func(i, j int) bool {
		a, b := edits[i], edits[j]
		if a.off != b.off {
			return a.off < b.off
		}
		return a.off == a.end && b.off != b.end
	})
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.off < at {
			return nil, fmt.Errorf("rewrite: overlapping edits at offset %d", e.off)
		}
		out.Write(src[at:e.off])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(src[at:])
	return out.Bytes(), nil
}

// check makes sure the rewritten text parses, has the lines of the
// original, and starts with its package clause on the same line.
func check(filename string, src, out []byte, pkgLine int) error {
	if bytes.Count(src, []byte("\n")) != bytes.Count(out, []byte("\n")) {
		return fmt.Errorf("rewrite %s: the line count changed", filename)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, out, parser.ParseComments)
	if err != nil {
		return fmt.Errorf("rewrite %s: the rewritten file does not parse: %v", filename, err)
	}
	if line := fset.Position(f.Package).Line; line != pkgLine {
		return fmt.Errorf("rewrite %s: the package clause moved from line %d to %d", filename, pkgLine, line)
	}
	return nil
}
