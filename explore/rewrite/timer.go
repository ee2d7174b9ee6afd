package rewrite

import (
	"bytes"
	"go/ast"
	"go/types"
)

// This file rewrites the calls of the methods of time's timers that the
// explorer controls (rt's timer.go): t.Stop() becomes
// tgrt_.TimerStop(t), t.Reset(d) tgrt_.TimerReset(t, d), and the same
// of a *time.Ticker TickerStop and TickerReset, t evaluated before d as
// Go evaluates them; a method value t.Stop becomes rt.TimerStopFunc(t)
// (t evaluated there, as Go binds it), and the method expression
// (*time.Timer).Stop the twin itself. A call on a Timer that is not a
// *time.Timer (a value, or one embedded in a struct) is trapped.

// timerMethods names the twin of each controlled method, by type.
var timerMethods = map[string]map[string]string{
	"Timer":  {"Stop": "TimerStop", "Reset": "TimerReset"},
	"Ticker": {"Stop": "TickerStop", "Reset": "TickerReset"},
}

// timerMethod rewrites or traps e when it selects Stop or Reset of a
// time.Timer or a time.Ticker; stack holds e and its ancestors.
func (r *rewriter) timerMethod(e *ast.SelectorExpr, stack []ast.Node) {
	sel := r.info.Selections[e]
	if sel == nil || (sel.Kind() != types.MethodVal && sel.Kind() != types.MethodExpr) {
		return
	}
	fn, ok := sel.Obj().(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "time" {
		return
	}
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		return
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok {
		return
	}
	typ := named.Obj().Name()
	twin := timerMethods[typ][fn.Name()]
	if twin == "" {
		return
	}
	what := "(*time." + typ + ")." + fn.Name()
	var call *ast.CallExpr
	if len(stack) >= 2 {
		call, _ = stack[len(stack)-2].(*ast.CallExpr)
	}
	if sel.Kind() == types.MethodExpr {
		// (*time.Timer).Stop is the twin itself: the same signature.
		r.needRT = true
		r.replace(e, rtName+"."+twin)
		return
	}
	switch {
	case !types.Identical(r.info.TypeOf(e.X), types.NewPointer(named)):
		r.unsupported(e.Pos(), what+" of a time."+typ+" that is not a *time."+typ+" (a value, or one embedded)", stack)
		return
	case bytes.ContainsAny(r.src[r.off(e.X.End()):r.off(e.End())], "\n/"):
		r.unsupported(e.Pos(), what+" split over lines", stack)
		return
	}
	r.needRT = true
	if call == nil || call.Fun != ast.Expr(e) {
		// A method value: the twin's, its receiver evaluated here.
		r.insertAt(e.X.Pos(), rtName+"."+twin+"Func(")
		r.replaceRange(e.X.End(), e.End(), ")")
		return
	}
	if bytes.ContainsAny(r.src[r.off(e.End()):r.off(call.Lparen)], "\n/") {
		r.unsupported(e.Pos(), what+" split over lines", stack)
		return
	}
	r.insertAt(e.X.Pos(), rtName+"."+twin+"(")
	sep := ""
	if len(call.Args) > 0 {
		sep = ", "
	}
	r.replaceRange(e.X.End(), call.Lparen+1, sep)
}
