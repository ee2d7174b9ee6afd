// Package explore is a deterministic interleaving explorer of the real
// table code (spec/explore.md).
//
// Every shared-memory operation of impl/ goes through internal/seam. The
// explored copies of the impl packages (internal/mutants/explored, and
// every mutant, built by sut.NewHookedCrTable and sut.NewHookedTBTable)
// import its twin internal/seam/hooked instead, whose every operation asks
// an installed scheduler for permission and reports what it did. The
// explorer is that scheduler. It runs the logical threads of a Scenario one
// at a time, on coroutines, and decides before every seam operation which
// thread performs the next one; between two model operations of a thread
// is a switch point too. So one schedule — the sequence of threads, one per
// step — determines a run completely, and replaying it reproduces the run
// exactly.
//
// # Strategies
//
//   - DFS explores every schedule with at most Bound preemptions (a switch
//     away from a thread inside an operation), bounds 0, 1, … in turn, so the
//     first failure found has the fewest preemptions. It is stateless: each
//     schedule is a fresh run from a new table. Sleep sets prune schedules
//     equivalent to ones already run (two steps commute unless they touch the
//     same word — the same address: every hooked operation reports it, so
//     the relation holds for every word, named or not — and one writes, or
//     one stamps a call and the other a return into the history;
//     spec/explore.md §5 has the whole relation and why it is sound); the
//     pruning keeps within the bound (TestReductionLosesNothing compares it
//     with the full search on the real code and every mutant).
//   - PCT (Burckhardt et al., ASPLOS 2010) and a uniform random walk run
//     seeded random schedules; a failure they find is shrunk greedily to
//     fewer preemptions.
//
// A run that completes no operation within a step cap is a progress
// (lock-freedom) violation; a panic of the code under test is a failure
// with its value and stack.
//
// # Oracle
//
// Nothing here restates a rule of the primitives. Each run's operations go
// through a linearizability Backend over the sut adapter of the explored
// table, stamped by the step they ran in; the history is checked by
// porcupine against model/ (linearizability.CheckCredits,
// CheckTokenBucket). After every step that changed a credit-table slot the
// explorer also takes the table's Snapshot — atomic, since nothing else
// runs — and every linearization must agree with those too, which is what
// catches an exhausted answer that held at no instant (C2). What the table
// shows once the threads are done (its snapshot and enqueued rows; a
// final peek of every key) must be what the model shows after some
// linearization. Verdicts are cached by the canonical form of the history.
//
// # Failures
//
// A Failure carries the schedule as a short string ("0x9.1x10.0x5": nine
// steps of thread 0, ten of thread 1, five of thread 0), a per-thread trace
// of its replay naming every word by where it is in the table (slots[26],
// epochs, buckets, trie0["k1","k2"], trie0 cell "k1".word) with the values
// it loaded, stored or compared, and porcupine's visualization. Replay runs
// a schedule again. The command is tollgate explore.
package interleave
