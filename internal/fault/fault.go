// Package fault names the deliberately broken variants (mutants) that
// tollgate's checkers must detect. Each Fault is one bug that has happened in
// real rate limiters or semaphores, written as a small patch against impl/
// (internal/mutants/patches/<name>.patch); go generate turns each patch into
// a mutant package, and internal/sut builds a table of the package a Fault
// names. impl/ itself holds only the correct algorithm. The faults of the
// Redis-backed tables (AllRedis) and of the etcd-backed ones (AllEtcd) are
// kept apart from the in-memory ones (All): their checks need a server.
//
// None, the zero Fault, is the correct implementation.
package fault

import (
	"fmt"
	"path"
	"strings"
)

// Fault is one injected bug.
type Fault uint8

// None is no fault: the correct implementation.
const None Fault = 0

// The constants, their names and packages, and which layer must kill
// which mutant are generated from the patches' headers into matrix_gen.go
// (go generate ./internal/mutants): adding a fault is adding its patch.

// row is one fault's patch header.
type row struct {
	name     string   // the patch's base name
	pkg      string   // the package of impl/ the patch changes
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
	for _, f := range Every() {
		if f.String() == name {
			return f, nil
		}
	}
	known := make([]string, 0, numFaults)
	for _, f := range Every() {
		known = append(known, f.String())
	}
	return 0, fmt.Errorf("fault: unknown mutant %q (known: %s)", name, strings.Join(known, ", "))
}
