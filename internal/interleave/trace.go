package interleave

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

// accessValues renders the values of one seam operation (the value loaded,
// expected or added to, and the value stored, swapped in or summed). A traced
// run renders them when the operation runs, so a trace shows what each word
// held at its step, not at the end of the run.
func accessValues(tr tracer, a hooked.Access) (old, new string) {
	val := func(v any) string {
		if s, ok := pairValue(v); ok {
			return s
		}
		return fmt.Sprint(v)
	}
	if tr != nil {
		val = func(v any) string { return tr.value(a.Word, v) }
	}
	if h, ok := a.Old.(uint64); ok && a.Hi {
		return val(hiHalf(h)), val(a.New)
	}
	return val(a.Old), val(a.New)
}

// describeAccess renders one seam operation with the values vals (from
// accessValues). A Pair's LoadLo and CompareAndSwapLo name the word's lo
// half ("slots[0].word.lo"). Words are named when the trace is rendered,
// after the run, by where the structure holds them.
func describeAccess(tr tracer, a hooked.Access, vals [2]string) string {
	word := fmt.Sprintf("%p", a.Word)
	if tr != nil {
		word = tr.word(a.Word)
	}
	if a.Lo {
		word += ".lo"
	}
	if a.Hi {
		word += ".hi"
	}
	old, new := vals[0], vals[1]
	at := ""
	if st, ok := tr.(interface{ site(hooked.Access) string }); ok {
		if s := st.site(a); s != "" {
			at = "  @ " + s
		}
	}
	return describeOp(a, word, old, new) + at
}

// describeOp renders one seam operation on the named word.
func describeOp(a hooked.Access, word, old, new string) string {
	switch a.Op {
	case hooked.Load:
		return fmt.Sprintf("load %s = %s", word, old)
	case hooked.Store:
		return fmt.Sprintf("store %s := %s", word, new)
	case hooked.Add:
		return fmt.Sprintf("add %s: %s → %s", word, old, new)
	case hooked.CAS:
		res := "ok"
		if !a.OK {
			res = "FAILED"
		}
		return fmt.Sprintf("cas %s: %s → %s %s", word, old, new, res)
	case hooked.Swap, hooked.And, hooked.Or, hooked.Tick:
		return fmt.Sprintf("%s %s: %s → %s", a.Op, word, old, new)
	case hooked.Now:
		return fmt.Sprintf("now = +%s", old)
	case hooked.Lock, hooked.RLock:
		if !a.OK {
			return fmt.Sprintf("try%s %s: held, FAILED", a.Op, word)
		}
	}
	return fmt.Sprintf("%s %s", a.Op, word)
}

// hiHalf is the value of a Pair's LoadHi, so that a tracer can tell it from
// a lo half's.
type hiHalf uint64

// pairValue renders the value of a Pair's 128-bit operation, {lo, hi}.
func pairValue(v any) (string, bool) {
	p, ok := v.([2]uint64)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("{lo=%d hi=%d}", p[0], p[1]), true
}

// renderTrace lays a traced run out as a table with one column per
// thread: one row per step, the call of an operation, its seam operation
// (or nothing, at a boundary) and its answer on lines of their own, and in
// the last column where a switch preempted a thread and what the step
// observer saw.
func renderTrace(p program, tr tracer, r runResult) string {
	n := max(p.threads(), r.threads)
	var b strings.Builder
	writeSetup(&b, tr)
	rows := []traceRow{traceHead(tr, n, r.goSites)}
	last := -1
	for i, s := range r.steps {
		rw := make(traceRow, n+2)
		rw[0] = []string{fmt.Sprint(i + 1)}
		rw[1+s.thread] = stepLines(tr, s)
		rw[n+1] = stepNotes(s, last)
		last = s.thread
		rows = append(rows, rw)
	}
	width := columnWidths(rows, n)
	for k, rw := range rows {
		writeRow(&b, rw, width)
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
	return b.String()
}

// traceRow is one row of a rendered trace: per column, its lines.
type traceRow [][]string

// writeSetup writes what the program's setup did before the threads
// started, if the tracer recorded anything.
func writeSetup(b *strings.Builder, tr tracer) {
	if tr == nil {
		return
	}
	if s := tr.setup(); len(s) > 0 {
		b.WriteString("setup (before the threads start, no switches):\n")
		for _, line := range s {
			fmt.Fprintf(b, "  %s\n", line)
		}
		b.WriteString("\n")
	}
}

// traceHead is the trace's header row: step, each thread (with its name,
// when the tracer gives one), and the notes column.
func traceHead(tr tracer, n int, goSites []string) traceRow {
	head := traceRow{{"step"}}
	for t := 0; t < n; t++ {
		name := fmt.Sprintf("T%d", t)
		if tn, ok := tr.(interface{ threadName(int) string }); ok {
			if s := tn.threadName(t); s != "" {
				name += " (" + s + ")"
			}
		}
		if t < len(goSites) && goSites[t] != "" {
			name += " (" + goSiteName(goSites[t]) + ")"
		}
		head = append(head, []string{name})
	}
	return append(head, []string{""})
}

// stepLines are a step's lines in its thread's column: the call of an
// operation, its seam operation and its answer, each when the step made
// it, the last marked when the step ended the thread.
func stepLines(tr tracer, s stepRec) []string {
	var lines []string
	opName := "?"
	if tr != nil && s.op >= 0 {
		opName = tr.call(s.thread, s.op)
	}
	if s.acc.call {
		lines = append(lines, "▶ "+opName)
	}
	if s.hasRaw {
		vals := s.vals
		if !s.rendered {
			vals[0], vals[1] = accessValues(tr, s.raw)
		}
		if s.op >= 0 || opName != "?" {
			lines = append(lines, short(opName)+": "+describeAccess(tr, s.raw, vals))
		} else {
			lines = append(lines, describeAccess(tr, s.raw, vals))
		}
	}
	if s.desc != "" {
		if s.op >= 0 {
			lines = append(lines, short(opName)+": "+s.desc)
		} else {
			lines = append(lines, s.desc)
		}
	}
	if s.acc.ret && tr != nil {
		lines = append(lines, "⇒ "+tr.ret(s.thread, s.op))
	}
	if s.doneAfter {
		if len(lines) == 0 {
			// The step ended the thread before its operation
			// reported anything: it panicked.
			lines = append(lines, short(opName)+": ends")
		}
		lines[len(lines)-1] += " (done)"
	}
	return lines
}

// stepNotes are a step's lines in the last column: the thread it preempted
// (last, the thread of the step before), and what the step observer saw.
func stepNotes(s stepRec, last int) []string {
	var notes []string
	if s.preempt {
		notes = append(notes, fmt.Sprintf("← preempts T%d", last))
	}
	if s.note != "" {
		notes = append(notes, s.note)
	}
	return notes
}

// columnWidths is the width of each of the n+2 columns: its longest line.
func columnWidths(rows []traceRow, n int) []int {
	width := make([]int, n+2)
	for _, rw := range rows {
		for j, cell := range rw {
			for _, line := range cell {
				width[j] = max(width[j], utf8.RuneCountInString(line))
			}
		}
	}
	return width
}

// writeRow writes one row, as many lines high as its tallest cell: the
// step number right-aligned, the threads' columns left-aligned between
// bars, the notes column after three spaces, trailing spaces trimmed.
func writeRow(b *strings.Builder, rw traceRow, width []int) {
	height := 1
	for _, cell := range rw {
		height = max(height, len(cell))
	}
	notes := len(rw) - 1
	for h := 0; h < height; h++ {
		var line strings.Builder
		for j, cell := range rw {
			text := ""
			if h < len(cell) {
				text = cell[h]
			}
			pad := width[j] - utf8.RuneCountInString(text)
			switch {
			case j == 0:
				line.WriteString(strings.Repeat(" ", pad) + text)
			case j == notes:
				if text != "" {
					line.WriteString("   " + text)
				}
			default:
				line.WriteString(" │ " + text + strings.Repeat(" ", pad))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// short is the name of the operation without its arguments.
func short(call string) string {
	if i := strings.IndexAny(call, " ("); i > 0 {
		return call[:i]
	}
	return call
}
