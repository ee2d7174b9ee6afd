package generate

import (
	"bytes"
	"fmt"
	"go/format"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants/patch"
)

// FaultFile is the file of internal/fault the generator writes from the
// patches' headers: the Fault constants, their names and packages, and
// the mutant matrix (which layer must kill which mutant).
const FaultFile = "internal/fault/matrix_gen.go"

// Layers are the checking layers a patch's Caught-by line may name, in the
// order of the README's mutant table: the names the layers register with
// internal/mutant.
var Layers = []string{"rapid", "fuzz", "porcupine", "conform", "explore"}

// prefixes maps a fault name's prefix to the package of impl/ its patch
// changes.
var prefixes = []struct{ prefix, dir string }{
	{"cr-", "impl/credits"},
	{"tb-", "impl/tokenbucket"},
	{"rtb-", "impl/redis/tokenbucket"},
	{"rcr-", "impl/redis/credits"},
	{"etb-", "impl/etcd/tokenbucket"},
	{"ecr-", "impl/etcd/credits"},
}

// Fault is one fault as its patch declares it, read before internal/fault
// is generated from it (so the generator never depends on the constants
// it writes).
type Fault struct {
	Header
	name string // the patch's base name, the fault's name
	pkg  string // the package of impl/ the patch changes, by the name's prefix
}

// String is the fault's name.
func (f Fault) String() string { return f.name }

// Package is the directory of the package of impl/ the fault's patch
// changes.
func (f Fault) Package() string { return f.pkg }

// Credits reports whether the fault is one of a credit table, in memory or
// on a server.
func (f Fault) Credits() bool { return filepath.Base(f.pkg) == "credits" }

// Redis reports whether the fault is one of a Redis-backed table.
func (f Fault) Redis() bool { return strings.HasPrefix(f.pkg, "impl/redis/") }

// Etcd reports whether the fault is one of an etcd-backed table.
func (f Fault) Etcd() bool { return strings.HasPrefix(f.pkg, "impl/etcd/") }

// Server reports whether the fault is one of a server-backed table (Redis
// or etcd), which the in-process layers cannot run.
func (f Fault) Server() bool { return f.Redis() || f.Etcd() }

// Header is the machine-readable part of a patch's comment: its last
// paragraph, one "Key: value" field a line, where a line that starts with a
// space continues the field above it. The fields:
//
//	Fault: CrNoEpochPin 1        the constant of internal/fault and its value
//	Doc: …                       the constant's doc comment, after "Ident: "
//	Bug: …                       the README table's "the bug" cell
//	Caught-by: rapid fuzz …      the layers that must kill the mutant (Layers)
//	Measured: porcupine C16 7 ms a layer's measured kill, one line per layer
//	Spin: C3                     what spin's model of the mutant breaks
//	Killed-by: …                 a server mutant's README cell: what kills it
//
// Fault, Doc and Bug are required. An in-memory mutant may not have
// Killed-by, nor a mutant of a server-backed table (Redis or etcd)
// Caught-by, Measured or Spin (the in-process layers cannot run it; its
// checks need a server).
type Header struct {
	Ident    string
	Value    int
	Doc      string
	Bug      string
	CaughtBy []string
	Measured []Figure
	Spin     string
	KilledBy string
}

// Figure is one layer's measured kill of a mutant, as the README's table
// shows it: the invariant and the time, e.g. "C3 1 ms".
type Figure struct{ Layer, Text string }

// ParseHeader reads the fields of the patch called name (a path, for
// messages) from its comment.
func ParseHeader(name, comment string) (Header, error) {
	var h Header
	paras := strings.Split(strings.TrimSpace(comment), "\n\n")
	last := paras[len(paras)-1]
	if len(paras) < 2 || !strings.HasPrefix(last, "Fault:") {
		return h, fmt.Errorf("%s: the comment's last paragraph must be its fields, starting with a Fault: line (see %s)", name, "internal/mutants/internal/generate.Header")
	}
	var keys, values []string
	for _, l := range strings.Split(last, "\n") {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			if len(values) == 0 {
				return h, fmt.Errorf("%s: a continuation line before any field: %q", name, l)
			}
			values[len(values)-1] += " " + strings.TrimSpace(l)
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return h, fmt.Errorf("%s: %q is not a Key: value field", name, l)
		}
		keys, values = append(keys, k), append(values, strings.TrimSpace(v))
	}
	seen := map[string]bool{}
	for i, k := range keys {
		v := values[i]
		if seen[k] && k != "Measured" {
			return h, fmt.Errorf("%s: field %s given twice", name, k)
		}
		seen[k] = true
		switch k {
		case "Fault":
			f := strings.Fields(v)
			n := 0
			var err error
			if len(f) == 2 {
				n, err = strconv.Atoi(f[1])
			}
			if len(f) != 2 || err != nil || n < 1 || n > 255 || !token.IsIdentifier(f[0]) || !token.IsExported(f[0]) {
				return h, fmt.Errorf("%s: Fault: %q must be an exported identifier and a value from 1 to 255", name, v)
			}
			h.Ident, h.Value = f[0], n
		case "Doc":
			h.Doc = v
		case "Bug":
			h.Bug = v
		case "Caught-by":
			h.CaughtBy = strings.Fields(v)
			for _, l := range h.CaughtBy {
				if !slices.Contains(Layers, l) {
					return h, fmt.Errorf("%s: Caught-by names %q, which is no layer (%s)", name, l, strings.Join(Layers, ", "))
				}
			}
		case "Measured":
			l, text, _ := strings.Cut(v, " ")
			if !slices.Contains(Layers, l) || strings.TrimSpace(text) == "" {
				return h, fmt.Errorf("%s: Measured: %q must be a layer (%s) and what it measured", name, v, strings.Join(Layers, ", "))
			}
			for _, m := range h.Measured {
				if m.Layer == l {
					return h, fmt.Errorf("%s: two Measured lines for %s", name, l)
				}
			}
			h.Measured = append(h.Measured, Figure{l, strings.TrimSpace(text)})
		case "Spin":
			h.Spin = v
		case "Killed-by":
			h.KilledBy = v
		default:
			return h, fmt.Errorf("%s: unknown field %s (known: Fault, Doc, Bug, Caught-by, Measured, Spin, Killed-by)", name, k)
		}
	}
	for _, k := range []string{"Doc", "Bug"} {
		if !seen[k] || values[slices.Index(keys, k)] == "" {
			return h, fmt.Errorf("%s: no %s field", name, k)
		}
	}
	return h, nil
}

// readFault reads the fault the patch at rel (relative to root) declares.
func readFault(root, rel string) (Fault, error) {
	base := strings.TrimSuffix(filepath.Base(rel), ".patch")
	f := Fault{name: base}
	for _, p := range prefixes {
		if strings.HasPrefix(base, p.prefix) {
			f.pkg = p.dir
		}
	}
	if f.pkg == "" {
		var known []string
		for _, p := range prefixes {
			known = append(known, p.prefix)
		}
		return f, fmt.Errorf("%s names no fault: a mutant's name starts with one of %s, which says the package it changes", rel, strings.Join(known, " "))
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return f, err
	}
	p, err := patch.Parse(rel, data)
	if err != nil {
		return f, err
	}
	if f.Header, err = ParseHeader(rel, p.Comment); err != nil {
		return f, err
	}
	switch {
	case f.Server() && (len(f.CaughtBy) > 0 || len(f.Measured) > 0 || f.Spin != ""):
		return f, fmt.Errorf("%s: a mutant of %s has no Caught-by, Measured or Spin field (the in-process layers cannot run it); say what kills it on its Killed-by line", rel, f.pkg)
	case !f.Server() && f.KilledBy != "":
		return f, fmt.Errorf("%s: Killed-by is for the mutants of the server-backed tables; an in-memory one names its layers on its Caught-by line", rel)
	}
	return f, nil
}

// faultFile returns FaultFile for the faults fs, ordered by value.
func faultFile(fs []Fault) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go run ./%s/gen from %s/*.patch; DO NOT EDIT.\n\npackage fault\n\n", MutantsDir, PatchesDir)
	b.WriteString("// The faults, one a patch, in the order of their values (the Fault: line\n// of each patch's header); the comment of each is its patch's Doc: line.\nconst (\n")
	group := ""
	for i, f := range fs {
		if f.pkg != group {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "\t// Faults of %s", f.pkg)
			switch {
			case f.Redis():
				b.WriteString(": their checks need a redis-server, so All leaves\n\t// them out and AllRedis lists them")
			case f.Etcd():
				b.WriteString(": their checks need an etcd cluster, so All leaves\n\t// them out and AllEtcd lists them")
			}
			b.WriteString(".\n\n")
			group = f.pkg
		}
		for _, l := range wrap(f.Ident+": "+f.Doc, 72) {
			fmt.Fprintf(&b, "\t// %s\n", l)
		}
		fmt.Fprintf(&b, "\t%s Fault = %d\n", f.Ident, f.Value)
	}
	b.WriteString(")\n\n")
	fmt.Fprintf(&b, "// numFaults is one more than the largest fault.\nconst numFaults Fault = %d\n\n", len(fs)+1)
	fmt.Fprintf(&b, "// layerNames are the layers a patch's Caught-by line may name, in the\n// order of the README's mutant table.\nvar layerNames = []string{%s}\n\n", quoteAll(Layers))
	b.WriteString("// rows are the faults' patch headers, indexed by fault.\nvar rows = [...]row{\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "\t%s: {\n\t\tname: %q, pkg: %q,\n\t\tbug: %q,\n", f.Ident, f.name, f.pkg, f.Bug)
		if len(f.CaughtBy) > 0 {
			fmt.Fprintf(&b, "\t\tcaughtBy: []string{%s},\n", quoteAll(f.CaughtBy))
		}
		if len(f.Measured) > 0 {
			b.WriteString("\t\tmeasured: []figure{")
			for i, m := range f.Measured {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "{%q, %q}", m.Layer, m.Text)
			}
			b.WriteString("},\n")
		}
		if f.Spin != "" {
			fmt.Fprintf(&b, "\t\tspin: %q,\n", f.Spin)
		}
		if f.KilledBy != "" {
			fmt.Fprintf(&b, "\t\tkilledBy: %q,\n", f.KilledBy)
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// wrap breaks s into lines of at most width bytes at spaces (a longer
// word stands alone).
func wrap(s string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			out, line = append(out, line), w
		default:
			line += " " + w
		}
	}
	return append(out, line)
}
