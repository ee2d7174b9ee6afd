// Package auto is tollgate's automatic mutation testing: mutants nobody
// chose, generated from the source of impl/ and model/, each judged by a
// fast profile of the whole suite (`tollgate mutants --auto`).
//
// # Mutants
//
// A small go/ast mutator (mutate.go) makes one mutant per site and
// operator: arithmetic and bitwise operators swapped, comparison boundaries
// moved and comparisons negated, && and || swapped, ! and unary minus
// dropped, ++ and -- swapped, a statement removed (a call, an assignment,
// ++/--, break, continue, go, defer), a CompareAndSwap made a plain Store or
// a Load then a Store, and a conversion to the type a value already has
// dropped (the arm64 fused multiply-add hazard). Candidates that do not
// type-check are dropped. A mutant's ID names its file, function, operator,
// text and replacement, not its line, so the committed lists survive edits
// elsewhere.
//
// go-gremlins/gremlins was tried first and not used: it has none of the
// statement, compare-and-swap or conversion operators, its integration mode
// runs go test ./... once per mutant (about two minutes here, so days for a
// campaign) with no way to stop at the first layer that kills, and it
// cannot mutate the explorer's hooked copies of the tables, so the
// explorer would never see a mutant; its integration mode would also count
// the drift tests of internal/mutants as kills.
//
// # The oracle
//
// Every mutant of every mutated file is compiled into one copy of the file,
// a mutant schema (schema.go): each mutated node chooses at run time, by
// the number in TOLLGATE_AUTOMUT, between its original and its mutants. So
// each layer's test binary is built once per campaign (go test -c with an
// -overlay of the schemas; no tree is copied), and a mutant costs only its
// tests' run time. With no mutant active the schema build must pass every
// layer: that baseline is run first, and its times order the layers,
// cheapest first, and set their time-outs. A mutant is run layer by layer
// until one fails (Layers: the unit tests of its package, then of the rest
// of the suite in their fast forms: the fuzz seeds, rapid's machines with a
// fixed budget and seed, a short linearizability run with a fixed seed,
// the golden vectors and the Go driver's conformance run, and the default
// explore run: explore.DefaultRun, the very run `tollgate explore` makes
// with no flags, narrowed to the mutated table's scenarios), and the
// layer that killed it is recorded; a conversion mutant of the float code
// that survives them all is cross-compiled for arm64 and killed when it
// holds a fused multiply-add.
//
// The explorer checks the real code through the generated copies of
// internal/mutants/explored, so the campaign gives it the schema of each
// table file through the generator's own copy (generate.ExploredCopy), the
// same overlay. The drift tests of internal/mutants (generated files
// against impl/) are not part of the oracle: a mutated impl/ file makes
// them fail whatever its behaviour, which says nothing about the mutant.
//
// # The concurrency operators
//
// `tollgate mutants --auto -concurrency` mutates every atomic site of
// impl/credits and impl/tokenbucket with the operators of the
// concurrency-mutation literature (J. S. Bradbury, J. R. Cordy and
// J. Dingel, "Mutation Operators for Concurrent Java (J2SE 5.0)", Mutation
// 2006), adapted to Go's atomics as concurrency.go lists them: a
// compare-and-swap split into a load and a store, two adjacent atomic
// statements swapped, a load hoisted above the atomic operation before it,
// a re-check dropped for the value read earlier, a plain store in place of
// an atomic store or compare-and-swap, a retry loop cut to one attempt, a
// generation or epoch comparison made to pass. Their oracle is the default
// explore run alone (ConcurrencyLayers), on the explorer's hooked copies of
// the schema; a plain-store mutant writes through package active's Word or
// PairWords, a real non-atomic store in the free-running build, and the
// generator of the explored copies marks it as it marks every plain store
// to shared memory (hooked.PlainStore), so the explorer sees a plain
// write. A swap or a hoist spans two statements: its schema node is opaque
// (Mutant.Opaque), and a campaign judges such nodes in rounds of their own
// (Rounds), one schema build each. The survivors share equivalent.txt and
// open.txt with the classic campaign (each campaign reads only the entries
// of its own operators); the full campaign's figures are in
// results-concurrency.txt.
//
// # Time-outs
//
// A time-out is not a kill by itself: a mutant may make a test slow
// without making it wrong. A layer that times out (10 × its baseline, at
// least 3 s) is run again with three times the budget; only when it times
// out again and the dump of every thread's goroutine then (a SIGQUIT under
// GOTRACEBACK=crash, which a spinning goroutine cannot escape) has a
// goroutine inside the mutated file (the mutated code is still running, or
// blocked in it) is the mutant killed, as a confirmed hang, the failure the
// suite's own time-out would report. Otherwise the next layer runs.
//
// # Survivors
//
// A survivor is either listed in equivalent.txt, with the reason no
// behaviour can change, or in open.txt, with what it breaks and what would
// kill it; the campaign fails on a survivor on neither list, and on an
// entry that names a mutant it killed or no longer generates.
package auto
