package diff

import (
	"fmt"
	"strings"
)

// Failure is one violated property: which one, at which step, with which
// operations. It is an error.
type Failure struct {
	Property string   // spec invariant ID ("C7", "T5", …) or "agree/<op>"
	Step     int      // 1-based index of the operation that exposed it
	Op       string   // that operation
	Detail   string   // what was expected and what was seen (cmp.Diff for answers)
	History  []string // every operation applied, in order, ending with Op
}

func (f *Failure) Error() string {
	return fmt.Sprintf("diff: %s violated at step %d (%s): %s", f.Property, f.Step, f.Op, f.Detail)
}

// Replay renders the failure with the full list of operations, one per line,
// so the sequence can be rebuilt by hand or in a regression test.
func (f *Failure) Replay() string {
	var b strings.Builder
	b.WriteString(f.Error())
	b.WriteString("\noperations:\n")
	for i, op := range f.History {
		fmt.Fprintf(&b, "  %3d %s\n", i+1, op)
	}
	return b.String()
}

// Options tune a machine.
type Options struct {
	// PropertiesOnly skips the comparison with the model's answers and
	// keeps only the named properties (spec invariants checked on the
	// implementation's own answers). Tests use it to show that each property
	// has teeth of its own.
	PropertiesOnly bool
}

// history keeps the operations a machine applied, for failure reports.
type history struct {
	ops []string
}

func (h *history) add(op string) { h.ops = append(h.ops, op) }

func (h *history) fail(property, detail string) *Failure {
	op := ""
	if n := len(h.ops); n > 0 {
		op = h.ops[n-1]
	}
	return &Failure{Property: property, Step: len(h.ops), Op: op, Detail: detail, History: append([]string(nil), h.ops...)}
}
