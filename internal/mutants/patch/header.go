package patch

import (
	"fmt"
	"go/token"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

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

// Header is the machine-readable part of a mutant patch's comment: its
// last paragraph, one "Key: value" field a line, where a line that starts
// with a space continues the field above it. The fields:
//
//	Fault: CrNoEpochPin 1        the fault's identifier and its value
//	Doc: …                       what the bug is, in a sentence
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
	keys, values, err := headerFields(name, comment)
	if err != nil {
		return h, err
	}
	seen := map[string]bool{}
	for i, k := range keys {
		if seen[k] && k != "Measured" {
			return h, fmt.Errorf("%s: field %s given twice", name, k)
		}
		seen[k] = true
		if err := h.set(name, k, values[i]); err != nil {
			return h, err
		}
	}
	for _, k := range []string{"Doc", "Bug"} {
		if !seen[k] || values[slices.Index(keys, k)] == "" {
			return h, fmt.Errorf("%s: no %s field", name, k)
		}
	}
	return h, nil
}

// headerFields splits the comment's last paragraph into its fields' keys
// and values, joining continuation lines.
func headerFields(name, comment string) (keys, values []string, err error) {
	paras := strings.Split(strings.TrimSpace(comment), "\n\n")
	last := paras[len(paras)-1]
	if len(paras) < 2 || !strings.HasPrefix(last, "Fault:") {
		return nil, nil, fmt.Errorf("%s: the comment's last paragraph must be its fields, starting with a Fault: line (see internal/mutants/patch.Header)", name)
	}
	for _, l := range strings.Split(last, "\n") {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			if len(values) == 0 {
				return nil, nil, fmt.Errorf("%s: a continuation line before any field: %q", name, l)
			}
			values[len(values)-1] += " " + strings.TrimSpace(l)
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, nil, fmt.Errorf("%s: %q is not a Key: value field", name, l)
		}
		keys, values = append(keys, k), append(values, strings.TrimSpace(v))
	}
	return keys, values, nil
}

// set sets the field k of h to v.
func (h *Header) set(name, k, v string) error {
	switch k {
	case "Fault":
		return h.setFault(name, v)
	case "Doc":
		h.Doc = v
	case "Bug":
		h.Bug = v
	case "Caught-by":
		h.CaughtBy = strings.Fields(v)
		for _, l := range h.CaughtBy {
			if !slices.Contains(Layers, l) {
				return fmt.Errorf("%s: Caught-by names %q, which is no layer (%s)", name, l, strings.Join(Layers, ", "))
			}
		}
	case "Measured":
		return h.addMeasured(name, v)
	case "Spin":
		h.Spin = v
	case "Killed-by":
		h.KilledBy = v
	default:
		return fmt.Errorf("%s: unknown field %s (known: Fault, Doc, Bug, Caught-by, Measured, Spin, Killed-by)", name, k)
	}
	return nil
}

func (h *Header) setFault(name, v string) error {
	f := strings.Fields(v)
	n := 0
	var err error
	if len(f) == 2 {
		n, err = strconv.Atoi(f[1])
	}
	if len(f) != 2 || err != nil || n < 1 || n > 255 || !token.IsIdentifier(f[0]) || !token.IsExported(f[0]) {
		return fmt.Errorf("%s: Fault: %q must be an exported identifier and a value from 1 to 255", name, v)
	}
	h.Ident, h.Value = f[0], n
	return nil
}

func (h *Header) addMeasured(name, v string) error {
	l, text, _ := strings.Cut(v, " ")
	if !slices.Contains(Layers, l) || strings.TrimSpace(text) == "" {
		return fmt.Errorf("%s: Measured: %q must be a layer (%s) and what it measured", name, v, strings.Join(Layers, ", "))
	}
	for _, m := range h.Measured {
		if m.Layer == l {
			return fmt.Errorf("%s: two Measured lines for %s", name, l)
		}
	}
	h.Measured = append(h.Measured, Figure{l, strings.TrimSpace(text)})
	return nil
}

// Declared is one fault as its patch declares it: the patch's base name,
// the package of impl/ it changes (by the name's prefix) and its header.
type Declared struct {
	Header
	name string
	pkg  string
}

// String is the fault's name: its patch's base name.
func (f Declared) String() string { return f.name }

// Package is the directory of the package of impl/ the fault's patch
// changes.
func (f Declared) Package() string { return f.pkg }

// Credits reports whether the fault is one of a credit table, in memory or
// on a server.
func (f Declared) Credits() bool { return path.Base(f.pkg) == "credits" }

// Redis reports whether the fault is one of a Redis-backed table.
func (f Declared) Redis() bool { return strings.HasPrefix(f.pkg, "impl/redis/") }

// Etcd reports whether the fault is one of an etcd-backed table.
func (f Declared) Etcd() bool { return strings.HasPrefix(f.pkg, "impl/etcd/") }

// Server reports whether the fault is one of a server-backed table (Redis
// or etcd), which the in-process layers cannot run.
func (f Declared) Server() bool { return f.Redis() || f.Etcd() }

// Declare reads the fault that the patch file rel (a slash path ending in
// <name>.patch) with contents data declares.
func Declare(rel string, data []byte) (Declared, error) {
	base := strings.TrimSuffix(path.Base(rel), ".patch")
	f := Declared{name: base}
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
	p, err := Parse(rel, data)
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

// DeclareAll reads every dir/*.patch of fsys and returns the faults they
// declare in the order of their values, failing unless the values run from
// 1 with no gap and no two patches share a value or an identifier. The
// patches live in internal/mutants/patches; internal/fault reads them,
// embedded, when a program starts, and the generator from the tree.
func DeclareAll(fsys fs.FS, dir string) ([]Declared, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.patch"))
	if err != nil {
		return nil, err
	}
	byValue := map[int]Declared{}
	fileOf := map[int]string{}
	byIdent := map[string]string{}
	var problems []string
	for _, n := range names {
		f, err := declareFile(fsys, n)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if other, dup := fileOf[f.Value]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s both declare fault %d", other, n, f.Value))
			continue
		}
		if other, dup := byIdent[f.Ident]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s both declare the identifier %s", other, n, f.Ident))
			continue
		}
		byValue[f.Value], fileOf[f.Value], byIdent[f.Ident] = f, n, n
	}
	var out []Declared
	for v := 1; len(out) < len(byValue); v++ {
		f, ok := byValue[v]
		if !ok {
			problems = append(problems, fmt.Sprintf("no patch declares fault %d: the values of the Fault: lines run from 1 with no gap (a new patch takes the next value)", v))
			break
		}
		out = append(out, f)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the patches' headers do not declare the faults:\n\t%s", strings.Join(problems, "\n\t"))
	}
	return out, nil
}

func declareFile(fsys fs.FS, name string) (Declared, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return Declared{}, err
	}
	return Declare(name, data)
}
