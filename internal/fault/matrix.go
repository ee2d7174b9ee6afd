package fault

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The mutant matrix: which checking layer must kill which mutant, and what
// the README's mutant table shows for it. Every field is read from the
// header of the fault's patch (internal/mutants/patches/<name>.patch), and
// each layer's Sees asks CaughtBy, so the matrix is written once.

// Layers returns the names of the checking layers a patch's Caught-by line
// may name, in the order of the README's mutant table: "rapid", "fuzz",
// "porcupine", "conform", "explore" (the names they register with
// internal/mutant).
func Layers() []string { return slices.Clone(layerNames) }

// CaughtBy reports whether layer is expected to kill f: whether f's patch
// names it on its Caught-by line. A fault of a server-backed table names
// none (the in-process layers cannot run it), nor does None. CaughtBy
// panics if layer is not one of Layers, which is a defect of the caller.
func (f Fault) CaughtBy(layer string) bool {
	if !slices.Contains(layerNames, layer) {
		panic(fmt.Sprintf("fault: %q is not a layer of the mutant matrix (%s)", layer, strings.Join(layerNames, ", ")))
	}
	return f.known() && slices.Contains(rows[f].caughtBy, layer)
}

// Bug is the README table's one-line account of f's bug; "" for None.
func (f Fault) Bug() string {
	if !f.known() {
		return ""
	}
	return rows[f].bug
}

// Measured is layer's kill of f as last measured (the invariant it named
// and the time to kill, e.g. "C3 1 ms"), or "" when none is recorded.
func (f Fault) Measured(layer string) string {
	if !f.known() {
		return ""
	}
	for _, m := range rows[f].measured {
		if m.layer == layer {
			return m.text
		}
	}
	return ""
}

// Spin is what the spin model of f breaks, or "" when f is not modelled.
func (f Fault) Spin() string {
	if !f.known() {
		return ""
	}
	return rows[f].spin
}

// KilledBy says, for a fault of a server-backed table (Redis or etcd),
// what kills it (the checks that need a server); "" for the others.
func (f Fault) KilledBy() string {
	if !f.known() {
		return ""
	}
	return rows[f].killedBy
}

func (f Fault) known() bool { return f > None && f < numFaults }

// Table writes the README's table of the in-memory mutants fs: one row per
// fault, one column per layer of layers (in the order of Layers, whatever
// their order in layers), then spin's. A layer's cell is its measured kill;
// in parentheses when the layer is not expected to kill the mutant (a kill
// it need not make), "—" when it is not expected to and none is recorded,
// and "expected, not measured" when it is expected to and none is.
func Table(w io.Writer, fs []Fault, layers []string) error {
	var cols []string
	for _, l := range layerNames {
		if slices.Contains(layers, l) {
			cols = append(cols, l)
		}
	}
	head := append(append([]string{"mutant", "the bug"}, cols...), "spin")
	var b strings.Builder
	writeHead(&b, head)
	for _, f := range fs {
		cells := []string{patchLink(f), f.Bug()}
		for _, l := range cols {
			m := f.Measured(l)
			switch caught := f.CaughtBy(l); {
			case caught && m == "":
				m = "expected, not measured"
			case !caught && m == "":
				m = "—"
			case !caught:
				m = "(" + m + ")"
			}
			cells = append(cells, m)
		}
		spin := f.Spin()
		if spin == "" {
			spin = "not modelled"
		}
		writeRow(&b, append(cells, spin))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ServerTable writes the README's table of the server-backed mutants fs
// (Redis and etcd): the mutant, its bug and what kills it.
func ServerTable(w io.Writer, fs []Fault) error {
	var b strings.Builder
	writeHead(&b, []string{"mutant", "the bug", "killed by"})
	for _, f := range fs {
		writeRow(&b, []string{patchLink(f), f.Bug(), f.KilledBy()})
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func patchLink(f Fault) string {
	return fmt.Sprintf("[`%s`](internal/mutants/patches/%s.patch)", f, f)
}

// writeHead writes a table's header row and the rule under it.
func writeHead(b *strings.Builder, head []string) {
	writeRow(b, head)
	for _, h := range head {
		b.WriteString("|" + strings.Repeat("-", len(h)+2))
	}
	b.WriteString("|\n")
}

func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}
