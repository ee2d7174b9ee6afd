// Package fault names the deliberately broken variants (mutants) that
// tollgate's checkers must detect. Each Fault is one bug that has happened in
// real rate limiters or semaphores, written as a small patch against impl/
// (internal/mutants/patches/<name>.patch). The faults are read from the
// patches' headers, embedded, when a program starts: a fault's value, name,
// package and row of the mutant matrix are its patch's, and Named finds a
// fault by its patch's name. internal/mutants/build turns each patch into a
// mutant package through a go -overlay, and internal/sut builds a table of
// the package a Fault names. impl/ itself holds only the correct algorithm. The faults of the
// Redis-backed tables (AllRedis) and of the etcd-backed ones (AllEtcd) are
// kept apart from the in-memory ones (All): their checks need a server.
//
// None, the zero Fault, is the correct implementation.
package fault

import (
	"fmt"
	"path"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants"
	"github.com/tollgate/tollgate/internal/mutants/patch"
)

// Fault is one injected bug.
type Fault uint8

// None is no fault: the correct implementation.
const None Fault = 0

// The faults, their names and packages, and which layer must kill which
// mutant are read from the patches' headers (patch.DeclareAll) when the
// program starts: adding a fault is adding its patch.
var (
	// rows are the faults' patch headers, indexed by fault (rows[None] is
	// empty).
	rows []row
	// numFaults is one more than the largest fault.
	numFaults Fault
	// byName finds a fault by its name.
	byName = map[string]Fault{}
	// layerNames are the layers a patch's Caught-by line may name, in the
	// order of the README's mutant table.
	layerNames = patch.Layers
)

func init() {
	ds, err := patch.DeclareAll(mutants.Patches, "patches")
	if err != nil {
		panic("fault: the embedded patches of internal/mutants/patches: " + err.Error())
	}
	rows = make([]row, len(ds)+1)
	for _, d := range ds {
		f := Fault(d.Value)
		r := row{name: d.String(), pkg: d.Package(), doc: d.Doc, bug: d.Bug, caughtBy: d.CaughtBy, spin: d.Spin, killedBy: d.KilledBy}
		for _, m := range d.Measured {
			r.measured = append(r.measured, figure{m.Layer, m.Text})
		}
		rows[f] = r
		byName[r.name] = f
	}
	numFaults = Fault(len(rows))
}

// Named returns the fault whose patch is internal/mutants/patches/<name>.patch.
// It panics when no patch has that name: a caller names a fault it knows
// of, so an unknown name is a defect (a patch renamed or removed). Parse is
// for names a user gives.
func Named(name string) Fault {
	f, ok := byName[name]
	if !ok {
		panic(fmt.Sprintf("fault: no patch internal/mutants/patches/%s.patch (a fault renamed or removed?)", name))
	}
	return f
}

// NotCompiled is the error of a table asked for f's mutant in a binary
// built without the mutants: who is the package asked.
func NotCompiled(who string, f Fault) error {
	return fmt.Errorf("%s: the mutant %v is not compiled into this binary: mutants are built from internal/mutants/patches through a go -overlay, which go test and tollgate do on demand (internal/mutants/build); by hand, go run ./internal/mutants/gen -overlay DIR writes DIR/overlay.json, then go build (or test) -overlay DIR/overlay.json …", who, f)
}

// row is one fault's patch header.
type row struct {
	name     string   // the patch's base name
	pkg      string   // the package of impl/ the patch changes
	doc      string   // what the bug is (Doc)
	bug      string   // the README table's "the bug"
	caughtBy []string // the layers that must kill it (Caught-by)
	measured []figure // the kills measured, per layer (Measured)
	spin     string   // what spin's model of it breaks; "" if not modelled
	killedBy string   // a Redis mutant's README cell (Killed-by)
}

// figure is one layer's measured kill, e.g. {"rapid", "C3 1 ms"}.
type figure struct{ layer, text string }

// String is the fault's stable name, as the mutants command prints it, and
// the base name of its patch; None is "none".
func (f Fault) String() string {
	if f == None {
		return "none"
	}
	if f > 0 && f < numFaults {
		return rows[f].name
	}
	return fmt.Sprintf("fault(%d)", uint8(f))
}

// Doc says in a sentence what f's bug is: its patch's Doc: line; "" for
// None.
func (f Fault) Doc() string {
	if f == None || f >= numFaults {
		return ""
	}
	return rows[f].doc
}

// Package is the directory of the package of impl/ that f's patch changes,
// by its name's prefix: "impl/credits" (cr-), "impl/tokenbucket" (tb-),
// "impl/redis/tokenbucket" (rtb-), "impl/redis/credits" (rcr-),
// "impl/etcd/tokenbucket" (etb-), "impl/etcd/credits" (ecr-); "" for None
// and for a value that names no fault.
func (f Fault) Package() string {
	if f == None || f >= numFaults {
		return ""
	}
	return rows[f].pkg
}

// Credits reports whether f is a fault of a credit table, in memory or on
// a server (otherwise it is a token-bucket fault).
func (f Fault) Credits() bool { return path.Base(f.Package()) == "credits" }

// Redis reports whether f is a fault of a Redis-backed table
// (impl/redis/...), whose checks need a redis-server.
func (f Fault) Redis() bool { return strings.HasPrefix(f.Package(), "impl/redis/") }

// Etcd reports whether f is a fault of an etcd-backed table
// (impl/etcd/...), whose checks need an etcd cluster.
func (f Fault) Etcd() bool { return strings.HasPrefix(f.Package(), "impl/etcd/") }

// Server reports whether f is a fault of a server-backed table (Redis or
// etcd): the in-process layers cannot run it.
func (f Fault) Server() bool { return f.Redis() || f.Etcd() }

// All lists every fault of the in-memory tables (impl/credits,
// impl/tokenbucket) in declaration order: the faults every in-process
// checking layer runs against.
func All() []Fault { return list(func(f Fault) bool { return !f.Server() }) }

// AllRedis lists every fault of the Redis-backed tables in declaration
// order.
func AllRedis() []Fault { return list(Fault.Redis) }

// AllEtcd lists every fault of the etcd-backed tables in declaration
// order.
func AllEtcd() []Fault { return list(Fault.Etcd) }

// AllServer lists AllRedis, then AllEtcd: the faults whose checks need a
// server, each saying what kills it (KilledBy).
func AllServer() []Fault { return append(AllRedis(), AllEtcd()...) }

// Every lists All, then AllRedis, then AllEtcd.
func Every() []Fault { return append(All(), AllServer()...) }

func list(keep func(Fault) bool) []Fault {
	var out []Fault
	for f := Fault(1); f < numFaults; f++ {
		if keep(f) {
			out = append(out, f)
		}
	}
	return out
}

// Parse returns the fault with the given name.
func Parse(name string) (Fault, error) {
	if f, ok := byName[name]; ok {
		return f, nil
	}
	known := make([]string, 0, numFaults)
	for _, f := range Every() {
		known = append(known, f.String())
	}
	return 0, fmt.Errorf("fault: unknown mutant %q (known: %s)", name, strings.Join(known, ", "))
}
