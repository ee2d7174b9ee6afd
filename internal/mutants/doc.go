// Package mutants holds tollgate's mutants: deliberately broken copies of
// the tables of impl/credits and impl/tokenbucket that the checkers must
// catch. Each mutant is one bug that has happened in real rate limiters or
// semaphores, written as the smallest change to the real lines: a unified
// diff against impl/, patches/<name>.patch, whose leading comment says what
// the bug is, where it happened and which invariant it breaks.
//
// go generate turns each patch into the package <name>/ (package credits or
// tokenbucket, as the original): the table files of impl/ with the patch
// applied, and aliases of impl's value types and constants, so a mutant
// table satisfies the interfaces of internal/sut exactly as the real one
// does; and layout.go, through which the interleaving explorer names the
// table's words and walks its trie (internal/layout). It also
// writes internal/sut/tables_gen.go, which builds the table of the package a
// fault.Fault names. impl/ itself stays the correct algorithm only; the
// generated packages are never edited by hand, and the tests of this
// package fail when one is out of date with its patch or with impl/.
//
// To add a mutant:
//
//  1. Copy the impl/ file, make the bug in it, and write the patch with
//     diff -u (paths a/impl/... and b/impl/...), a few lines of comment
//     before the first --- line. A patch may touch only the table files
//     that mutants copy (impl/credits: credits.go, stats_off.go,
//     stats_on.go; impl/tokenbucket: tokenbucket.go, trie.go, stats_off.go,
//     stats_on.go). The patch's base name is the fault's name.
//  2. End the comment with its fields (internal/generate.Header): the
//     fault's constant and the next free value, its doc line, its bug as the
//     README's table says it, and the layers that must kill it.
//     Before generating anything, go run ./cmd/tollgate mutants --patch
//     FILE judges the draft through a go -overlay (auto.JudgePatch): every
//     layer's fast form runs on the patched code and the layers that kill
//     it are named, so the Caught-by line can be written from them.
//  3. Run go generate ./internal/mutants, which also writes the constant,
//     its name and the matrix into internal/fault, and commit the generated
//     files; go run ./cmd/tollgate mutants --list -readme docs/checks.md puts the
//     mutant in the README's table.
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
// the real ones on a shared server. internal/sut/redis_tables_gen.go gets,
// per package, newRedis<Pkg>(ctx, f, opts, name), which calls New of f's
// package; internal/sut declares the interface redis<Pkg>Table it returns.
// Adding one is the same three steps: the patch (paths a/impl/redis/<pkg>/…),
// its fields (a Killed-by line instead of Caught-by: fault.AllRedis lists
// it, not fault.All, as its checks need a server), go generate.
//
// # Mutants of the etcd-backed tables
//
// A fault whose name starts etb- (impl/etcd/tokenbucket) or ecr-
// (impl/etcd/credits) mutates a package of impl/etcd, and its mutant is,
// as a Redis one, a copy of that whole package but the tests, with the
// patch applied to any of its files, and mutant.go, the copy's package
// doc; nothing is renamed (an etcd table keeps no code on the server).
// backends/etcdsut/tables_gen.go gets, per package, newEtcd<Pkg>(…),
// which calls NewFromClient of f's package (the real one for fault.None);
// backends/etcdsut declares the interface etcd<Pkg>Table it returns, and
// the generator (etcdConstructors in internal/mutants/internal/generate)
// says how each package's table is built. Adding one is the same three
// steps, with a Killed-by line: fault.AllEtcd lists it, and tollgate
// driver --backend etcd --mutant serves it.
package mutants

//go:generate go run ./gen
