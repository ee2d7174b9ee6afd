package explore

import (
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// tracer renders the steps of a replayed run: names of words, values, and
// the model operations of each thread.
type tracer interface {
	// observe is called after every step of a traced run, so that words
	// are named while the structure that reaches them exists.
	observe(c *controller, r *stepRec)
	word(addr unsafe.Pointer) string
	value(addr unsafe.Pointer, v any) string
	// call and ret render operation op of thread t and its answer.
	call(t, op int) string
	ret(t, op int) string
	// setup renders the operations run before the threads started.
	setup() []string
}

// describeAccess renders one seam operation.
func describeAccess(tr tracer, a hooked.Access) string {
	word := fmt.Sprintf("%p", a.Word)
	val := func(v any) string { return fmt.Sprint(v) }
	if tr != nil {
		word = tr.word(a.Word)
		val = func(v any) string { return tr.value(a.Word, v) }
	}
	switch a.Op {
	case hooked.Load:
		return fmt.Sprintf("load %s = %s", word, val(a.Old))
	case hooked.Store:
		return fmt.Sprintf("store %s := %s", word, val(a.New))
	case hooked.Add:
		return fmt.Sprintf("add %s: %s → %s", word, val(a.Old), val(a.New))
	case hooked.CAS:
		res := "ok"
		if !a.OK {
			res = "FAILED"
		}
		return fmt.Sprintf("cas %s: %s → %s %s", word, val(a.Old), val(a.New), res)
	}
	return fmt.Sprintf("%s %s", a.Op, word)
}

// renderTrace lays a traced run out as a table with one column per thread.
func renderTrace(p program, tr tracer, r runResult) string {
	n := p.threads()
	var b strings.Builder
	if tr != nil {
		if s := tr.setup(); len(s) > 0 {
			b.WriteString("setup (before the threads start, no switches):\n")
			for _, line := range s {
				fmt.Fprintf(&b, "  %s\n", line)
			}
			b.WriteString("\n")
		}
	}
	head := []string{"step"}
	for t := 0; t < n; t++ {
		head = append(head, fmt.Sprintf("T%d", t))
	}
	head = append(head, "")
	rows := [][]string{head}
	last := -1
	for i, s := range r.steps {
		row := make([]string, n+2)
		row[0] = fmt.Sprint(i + 1)
		var parts []string
		opName := "?"
		if tr != nil && s.op >= 0 {
			opName = tr.call(s.thread, s.op)
		}
		if s.acc.call {
			parts = append(parts, "call "+opName)
		}
		if s.hasRaw {
			a := describeAccess(tr, s.raw)
			if !s.acc.call {
				a = short(opName) + ": " + a
			}
			parts = append(parts, a)
		}
		if s.acc.ret && tr != nil {
			parts = append(parts, "⇒ "+tr.ret(s.thread, s.op))
		}
		if s.doneAfter {
			parts = append(parts, "(done)")
		}
		if s.note != "" {
			parts = append(parts, "["+s.note+"]")
		}
		row[1+s.thread] = strings.Join(parts, "; ")
		if s.preempt {
			row[n+1] = fmt.Sprintf("← preempts T%d", last)
		}
		last = s.thread
		rows = append(rows, row)
	}
	width := make([]int, n+2)
	for _, row := range rows {
		for j, cell := range row {
			width[j] = max(width[j], utf8.RuneCountInString(cell))
		}
	}
	for k, row := range rows {
		for j, cell := range row {
			pad := width[j] - utf8.RuneCountInString(cell)
			switch {
			case j == 0:
				b.WriteString(strings.Repeat(" ", pad) + cell)
			case j == n+1:
				if cell != "" {
					b.WriteString(" " + cell)
				}
			default:
				b.WriteString(" │ " + cell + strings.Repeat(" ", pad))
			}
		}
		b.WriteString("\n")
		if k == 0 {
			total := 0
			for j := 0; j <= n; j++ {
				total += width[j] + 3
			}
			b.WriteString(strings.Repeat("─", total-3) + "\n")
		}
	}
	if r.failure != nil && r.status != complete {
		fmt.Fprintf(&b, "run ended: %s\n", r.failure.Detail)
	}
	return strings.TrimRight(b.String(), " \n") + "\n"
}

// short is the name of the operation without its arguments.
func short(call string) string {
	if i := strings.IndexAny(call, " ("); i > 0 {
		return call[:i]
	}
	return call
}
