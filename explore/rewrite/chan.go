package rewrite

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// This file rewrites goroutines, channel operations and select statements
// to explore/rt's controlled forms (rt's chan.go says what each becomes
// and why it keeps Go's order of evaluation). A file older than go1.18
// cannot call them (they are generic): there each such construct gets a
// trap, as the explorer cannot control it. Edits that open a call go in
// while the file is walked, before the accesses' edits at the same offset;
// those that close one go into r.late, after every other edit at their
// offset.

// closeAt adds text at p after every other edit there.
func (r *rewriter) closeAt(p token.Pos, text string) {
	off := r.off(p)
	r.late = append(r.late, edit{off, off, text})
}

// replaceRange replaces the text from p to end.
func (r *rewriter) replaceRange(p, end token.Pos, text string) {
	r.edits = append(r.edits, edit{r.off(p), r.off(end), text})
}

// goSite names the line of p for a go statement: the file's directory and
// name, and the line.
func (r *rewriter) goSite(p token.Pos) string {
	return fmt.Sprintf("%s/%s:%d", r.dir, r.base, r.pos(p).Line)
}

// text is the source of n.
func (r *rewriter) text(n ast.Node) string { return string(r.src[r.off(n.Pos()):r.off(n.End())]) }

// goStmt rewrites go f(a, b) to
//
//	tgrt_.Go(site, func() func() { tgrt_f, tgrt_a0, tgrt_a1 := f, a, b; return func() { tgrt_f(tgrt_a0, tgrt_a1) } }())
//
// so the function value and the arguments are evaluated by the go
// statement, as Go does, and the call runs in the new goroutine. A
// constant argument is not evaluated there (its text is repeated in the
// call); a go statement of a builtin, of a generic function whose type
// arguments are inferred, or with an argument of a multi-valued call or
// of an untyped non-constant type is not rewritten (false).
func (r *rewriter) goStmt(g *ast.GoStmt) bool {
	if !r.generics {
		return false
	}
	call := g.Call
	fun := ast.Unparen(call.Fun)
	if id, ok := fun.(*ast.Ident); ok {
		if _, ok := r.info.Uses[id].(*types.Builtin); ok || r.info.Uses[id] == nil && id.Obj == nil && builtinNames[id.Name] {
			return false
		}
	}
	if r.inferred(fun) {
		return false
	}
	lhs := []string{"tgrt_f"}
	var args []string
	type blank struct{ a ast.Expr }
	var blanks []blank
	for i, a := range call.Args {
		tv, ok := r.info.Types[a]
		if !ok {
			return false
		}
		if _, tuple := tv.Type.(*types.Tuple); tuple {
			return false
		}
		if tv.Value != nil || tv.IsNil() {
			t := r.text(a)
			if strings.Contains(t, "\n") {
				return false
			}
			lhs = append(lhs, "_")
			args = append(args, t)
			blanks = append(blanks, blank{a})
			continue
		}
		if b, ok := tv.Type.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
			return false
		}
		name := "tgrt_a" + strconv.Itoa(i)
		lhs = append(lhs, name)
		args = append(args, name)
	}
	r.needRT = true
	r.replaceRange(g.Go, call.Fun.Pos(), fmt.Sprintf("%s.Go(%q, func() func() { %s := ", rtName, r.goSite(g.Go), strings.Join(lhs, ", ")))
	for _, b := range blanks {
		r.replace(b.a, "struct{}{}")
	}
	inner := strings.Join(args, ", ")
	if call.Ellipsis.IsValid() {
		inner += "..."
		r.replaceRange(call.Ellipsis, call.Ellipsis+3, "")
	}
	suffix := fmt.Sprintf("; return func() { tgrt_f(%s) } }())", inner)
	if len(call.Args) == 0 {
		r.replaceRange(call.Lparen, call.Rparen+1, suffix)
		return true
	}
	r.replaceRange(call.Lparen, call.Lparen+1, ", ")
	last := call.Args[len(call.Args)-1].End()
	if call.Ellipsis.IsValid() {
		last = call.Ellipsis + 3
	}
	if i := bytes.IndexByte(r.src[r.off(last):r.off(call.Rparen)], ','); i >= 0 {
		// A trailing comma: not in the list of an assignment.
		r.edits = append(r.edits, edit{r.off(last) + i, r.off(last) + i + 1, ""})
	}
	r.replaceRange(call.Rparen, call.Rparen+1, suffix)
	return true
}

// builtinNames are the builtins a go statement may call.
var builtinNames = map[string]bool{"close": true, "copy": true, "delete": true, "panic": true, "print": true, "println": true, "recover": true, "clear": true}

// inferred reports whether fun is a generic function whose type arguments
// the call infers (it cannot be assigned before the call).
func (r *rewriter) inferred(fun ast.Expr) bool {
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return false
	}
	_, ok := r.info.Instances[id]
	return ok
}

// sendStmt rewrites ch <- v to tgrt_.Send(ch)(v).
func (r *rewriter) sendStmt(s *ast.SendStmt) bool {
	if !r.generics {
		return false
	}
	r.needRT = true
	r.insertAt(s.Chan.Pos(), rtName+".Send(")
	r.replaceRange(s.Arrow, s.Arrow+2, ")(")
	r.closeAt(s.Value.End(), ")")
	return true
}

func (r *rewriter) insertAt(p token.Pos, text string) {
	off := r.off(p)
	r.edits = append(r.edits, edit{off, off, text})
}

// recvExpr rewrites <-ch to tgrt_.Recv(ch), or, as the value of a
// two-valued assignment or declaration (v, ok := <-ch), tgrt_.Recv2(ch).
func (r *rewriter) recvExpr(u *ast.UnaryExpr, stack []ast.Node) bool {
	if !r.generics {
		return false
	}
	fn := ".Recv("
	for i := len(stack) - 2; i >= 0; i-- {
		if _, ok := stack[i].(*ast.ParenExpr); ok {
			continue
		}
		switch p := stack[i].(type) {
		case *ast.AssignStmt:
			if len(p.Lhs) == 2 && len(p.Rhs) == 1 && ast.Unparen(p.Rhs[0]) == u {
				fn = ".Recv2("
			}
		case *ast.ValueSpec:
			if len(p.Names) == 2 && len(p.Values) == 1 && ast.Unparen(p.Values[0]) == u {
				fn = ".Recv2("
			}
		}
		break
	}
	r.needRT = true
	r.replaceRange(u.OpPos, u.OpPos+2, rtName+fn)
	r.closeAt(u.X.End(), ")")
	return true
}

// commRecv is the receive of a select case's communication, or nil.
func commRecv(comm ast.Stmt) *ast.UnaryExpr {
	var e ast.Expr
	switch c := comm.(type) {
	case *ast.ExprStmt:
		e = c.X
	case *ast.AssignStmt:
		if len(c.Rhs) == 1 {
			e = c.Rhs[0]
		}
	}
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
		return u
	}
	return nil
}

// selectStmt rewrites a select (rt.Select says to what). It marks the
// cases' sends and receives as the select's either way; it returns false,
// rewriting nothing, when it cannot: in a file older than go1.18, or
// when a case sends a constant or nil to a channel whose element type the
// file cannot name.
func (r *rewriter) selectStmt(s *ast.SelectStmt) bool {
	n, hasDefault := 0, false
	type sendVal struct {
		v   ast.Expr
		typ string // the conversion an untyped value needs
	}
	var sends []sendVal
	for _, c := range s.Body.List {
		cc := c.(*ast.CommClause)
		switch comm := cc.Comm.(type) {
		case nil:
			hasDefault = true
			continue
		case *ast.SendStmt:
			r.commOps[comm] = true
			sv := sendVal{v: comm.Value}
			if tv, ok := r.info.Types[comm.Value]; !ok {
				return false
			} else if b, ok := tv.Type.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 || tv.IsNil() || tv.Value != nil {
				// A constant or nil: SelValue would give it its default
				// type, not the channel's element type.
				ch, ok := under(r.info.TypeOf(comm.Chan)).(*types.Chan)
				if !ok {
					return false
				}
				t, ok := r.typeText(ch.Elem())
				if !ok {
					return false
				}
				sv.typ = t
			}
			sends = append(sends, sv)
		default:
			u := commRecv(comm)
			if u == nil {
				return false
			}
			r.commOps[u] = true
		}
		n++
	}
	if !r.generics {
		return false
	}
	name := fmt.Sprintf("tgrt_s%d", r.off(s.Select))
	r.needRT = true
	use := ""
	if n == 0 {
		use = "_ = " + name + "; " // no case refers to it
	}
	r.replaceRange(s.Select, s.Body.Lbrace+1, fmt.Sprintf("switch %s := %s.NewSelect(%d, %t, %q); { default: %sselect {", name, rtName, n, hasDefault, r.goSite(s.Select), use))
	r.insertAt(s.Body.Rbrace, "}")
	k := 0
	for _, c := range s.Body.List {
		switch comm := c.(*ast.CommClause).Comm.(type) {
		case nil:
		case *ast.SendStmt:
			sv := sends[k]
			k++
			r.insertAt(comm.Chan.Pos(), rtName+".SelSend("+name+", ")
			r.closeAt(comm.Chan.End(), ")")
			if sv.typ != "" {
				r.insertAt(comm.Value.Pos(), rtName+".SelValue("+name+", ("+sv.typ+")(")
				r.closeAt(comm.Value.End(), "))")
			} else {
				r.insertAt(comm.Value.Pos(), rtName+".SelValue("+name+", ")
				r.closeAt(comm.Value.End(), ")")
			}
		default:
			u := commRecv(comm)
			r.replaceRange(u.OpPos, u.OpPos+2, "<-"+rtName+".SelRecv("+name+", ")
			r.closeAt(u.X.End(), ")")
		}
	}
	return true
}

// typeText writes t as the file can name it: "" when a package it needs
// is not imported by the file.
func (r *rewriter) typeText(t types.Type) (string, bool) {
	ok := true
	s := types.TypeString(t, func(p *types.Package) string {
		if p.Path() == r.pkgPath {
			return ""
		}
		for _, spec := range r.f.Imports {
			path, _ := strconv.Unquote(spec.Path.Value)
			if path != p.Path() {
				continue
			}
			if spec.Name != nil {
				if spec.Name.Name == "_" || spec.Name.Name == "." {
					break
				}
				return spec.Name.Name
			}
			return p.Name()
		}
		ok = false
		return p.Name()
	})
	return s, ok
}

// rangeChan rewrites a range over a channel,
//
//	for v := range ch {
//
// to
//
//	for tgrt_iN := tgrt_.Range(ch); tgrt_iN.Next(); { v := tgrt_iN.V;
//
// (v = tgrt_iN.V; for an assignment; nothing for a range without a
// variable). The store to an assigned variable is not reported.
func (r *rewriter) rangeChan(s *ast.RangeStmt) {
	name := fmt.Sprintf("tgrt_i%d", r.off(s.For))
	open := name + " := " + rtName + ".Range("
	key := s.Key
	if id, ok := key.(*ast.Ident); ok && id.Name == "_" {
		key = nil
	}
	if s.Key != nil {
		r.replaceRange(s.Key.Pos(), s.X.Pos(), open)
	} else {
		r.replaceRange(s.Range, s.X.Pos(), open)
	}
	r.needRT = true
	r.expr(s.X, value)
	r.closeAt(s.X.End(), "); "+name+".Next(); ")
	if key != nil {
		tok := " := "
		if s.Tok == token.ASSIGN {
			tok = " = "
		}
		r.insertAt(s.Body.Lbrace+1, " "+strings.ReplaceAll(r.text(key), "\n", " ")+tok+name+".V;")
	}
	r.stmt(s.Body)
}
