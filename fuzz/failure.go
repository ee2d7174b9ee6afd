package fuzz

import (
	"fmt"
	"strings"
)

// Failure is one violated property: which one, at which step, with which
// operations. It is an error.
type Failure struct {
	// Property is the spec invariant ID ("C7", "T5", …): the property that
	// failed, or for an answer that differs from the model's, the invariant
	// model.TBDivergence / model.CrDivergence says it breaks. "panic" when
	// the implementation panicked.
	Property string
	Step     int      // 1-based index of the operation that exposed it
	Op       string   // that operation, as its String method renders it
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

// history keeps the inputs a machine applied, rendered (by the model's
// String methods) only when a failure is reported: rendering every step
// would dominate the run time.
type history[I fmt.Stringer] struct {
	ins []I
}

func (h *history[I]) add(in I) { h.ins = append(h.ins, in) }

func (h *history[I]) strings() []string {
	out := make([]string, len(h.ins))
	for i, in := range h.ins {
		out[i] = in.String()
	}
	return out
}

func (h *history[I]) fail(property, detail string) *Failure {
	ops := h.strings()
	op := ""
	if n := len(ops); n > 0 {
		op = ops[n-1]
	}
	return &Failure{Property: property, Step: len(ops), Op: op, Detail: detail, History: ops}
}

// guardedApply performs in on the implementation through apply, passes the
// answer through tamper when a test set one, and reports a panic of the
// implementation as a message instead of crashing the machine.
func guardedApply[I, O any](apply func(I) O, tamper func(I, O) O, in I) (out O, perr string) {
	defer func() {
		if r := recover(); r != nil {
			perr = fmt.Sprintf("implementation panicked: %v", r)
		}
	}()
	out = apply(in)
	if tamper != nil {
		out = tamper(in, out)
	}
	return out, ""
}
