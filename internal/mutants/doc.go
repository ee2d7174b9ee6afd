// Package mutants holds tollgate's mutants: deliberately broken copies of
// the tables of impl/credits and impl/tokenbucket that the checkers must
// catch. Each mutant is one bug that has happened in real rate limiters or
// semaphores, written as the smallest change to the real lines: a unified
// diff against impl/, patches/<name>.patch, whose leading comment says what
// the bug is, where it happened and which invariant it breaks.
//
// Nothing generated from a patch is committed. A mutant's package
// internal/mutants/<name> (package credits or tokenbucket, as the
// original: the table files of impl/ with the patch applied, aliases of
// impl's value types and constants, so a mutant table satisfies the
// interfaces of internal/sut exactly as the real one does, and layout.go,
// through which the interleaving explorer names the table's words and
// walks its trie, internal/layout) is generated at run time into a
// temporary or cache directory and handed to the go command with
// -overlay at its path inside the module (internal/mutants/build), along
// with the form of internal/sut/tables_gen.go (and of backends/redissut's
// and backends/etcdsut's) that has a case per mutant. The committed
// tables_gen.go files are their form without mutants: the tree builds,
// with the real tables only, and asking for a mutant that is not compiled
// in says how to get it (fault.NotCompiled). One build of a package with
// the overlay links every mutant.
//
// The faults themselves (value, name, doc, package and the mutant matrix)
// are read from the patches' headers, embedded (Patches), when a program
// starts (internal/fault); code names a fault by its patch's name,
// fault.Named("tb-plain-store").
//
// Who builds them: a test that needs the mutants calls build.Need, and its
// package's TestMain runs through build.Main (or build.Wrap), which runs
// the tests that asked again in the package's test binary rebuilt with the
// overlay, one build per package, so go test ./... on a fresh clone still
// runs every layer against every mutant. The tollgate command rebuilds
// itself with the overlay when a command asks for a mutant, saying so on
// the terminal, and runs the new binary with the same arguments. The
// overlay is generated once per state of its inputs and kept in the
// user's cache directory (build.Cached); the go build cache keeps the
// compiled packages. By hand: go run ./internal/mutants/gen -overlay DIR
// writes DIR/overlay.json, then go build, go test or go vet -overlay
// DIR/overlay.json.
//
// The explorer's copies of impl/, explored/{credits,tokenbucket} (the
// real tables on internal/seam/hooked, generated from impl/, not from a
// patch), stay committed: go generate ./internal/mutants writes them and
// the tables_gen.go files, and a test fails when one is out of date with
// impl/ (spec/explore.md §1 says, measured, why they are committed).
//
// To add a mutant:
//
//  1. Copy the impl/ file, make the bug in it, and write the patch with
//     diff -u (paths a/impl/... and b/impl/...), a few lines of comment
//     before the first --- line. A patch may touch only the table files
//     that mutants copy (impl/credits: credits.go, stats_off.go,
//     stats_on.go; impl/tokenbucket: tokenbucket.go, trie.go, stats_off.go,
//     stats_on.go). The patch's base name is the fault's name.
//  2. End the comment with its fields (internal/mutants/patch.Header): the
//     fault's identifier and the next free value, its doc line, its bug as
//     the README's table says it, and the layers that must kill it.
//     go run ./cmd/tollgate mutants --patch FILE judges the draft through a
//     go -overlay (auto.JudgePatch): every layer's fast form runs on the
//     patched code and the layers that kill it are named, so the Caught-by
//     line can be written from them.
//  3. Put the patch in patches/ and commit it: that is all. Every layer
//     now runs it (go test ./...), tollgate mutants lists it, and
//     go run ./cmd/tollgate mutants --list -readme docs/checks.md puts it in
//     the mutant tables.
//
// # Mutants of the Redis-backed tables
//
// A fault whose name starts rtb- (impl/redis/tokenbucket) or rcr-
// (impl/redis/credits) mutates a package of impl/redis (fault.Package). Its
// mutant is a copy of that whole package, every file but the tests: Go
// files and the embedded Lua library alike, and its patch may change any of
// them. The copy gains mutant.go, which appends the mutant's name to the
// package's library variable (every such package declares one: the name it
// loads its Functions library under), so a mutant's functions load beside
// the real ones on a shared server. backends/redissut/tables_gen.go gets
// (in the overlay's form), per package, newRedis<Pkg>(ctx, f, opts, name),
// which calls New of f's package; backends/redissut declares the interface
// redis<Pkg>Table it returns.
// Adding one is the same steps: the patch (paths a/impl/redis/<pkg>/…)
// and its fields (a Killed-by line instead of Caught-by: fault.AllRedis
// lists it, not fault.All, as its checks need a server).
//
// # Mutants of the etcd-backed tables
//
// A fault whose name starts etb- (impl/etcd/tokenbucket) or ecr-
// (impl/etcd/credits) mutates a package of impl/etcd, and its mutant is,
// as a Redis one, a copy of that whole package but the tests, with the
// patch applied to any of its files, and mutant.go, the copy's package
// doc; nothing is renamed (an etcd table keeps no code on the server).
// backends/etcdsut/tables_gen.go gets (in the overlay's form), per
// package, newEtcd<Pkg>(…), which calls NewFromClient of f's package (the
// real one for fault.None);
// backends/etcdsut declares the interface etcd<Pkg>Table it returns, and
// the generator (etcdConstructors in internal/mutants/internal/generate)
// says how each package's table is built. Adding one is the same
// steps, with a Killed-by line: fault.AllEtcd lists it, and tollgate
// driver --backend etcd --mutant serves it.
package mutants

//go:generate go run ./gen
