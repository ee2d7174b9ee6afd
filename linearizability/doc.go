// Package linearizability records concurrent histories of tollgate's two
// lock-free primitives and checks them with porcupine
// (github.com/anishathalye/porcupine) against the sequential model in model/.
//
// # Models
//
// TokenBucketModel and CreditsModel are thin adapters: their Step functions
// call model.StepBucket and the model.Credits methods and compare outputs, so
// no rule of spec/ is written here a second time. Both are pure and
// deterministic (a Step that is not makes porcupine misbehave, porcupine#25).
//
//   - Token bucket (T11): one partition per key, state model.Bucket; the
//     clock reading each call carried is part of its input (TBInput.NowMs), so
//     a history may hold callers whose reading is older than a write that
//     committed first; the model judges those with T4. reset_all joins every
//     key's partition (it is linearizable per key only).
//   - Credit table (C16): one partition (an exhausted answer couples every
//     slot of its class). A reserve may claim any free slot of its class
//     (model.Credits.ReserveSlot); that no epoch is ever issued twice is
//     checked over the whole history outside porcupine (CheckEpochs). A sweep
//     is not atomic (spec/credits.md §5): a sweep that freed k rows becomes k
//     operations over its interval, each one model.Credits.SweepSlot step on
//     any row it applies to — the only nondeterministic step, handled by a
//     search inside Step over the set of states the history can have
//     reached (kept in a canonical order, so Step stays deterministic) —
//     and, when it owes rows, one more that ends it: it holds only if
//     none of the reservations the sweep owes is left reserved (C17:
//     OwedBySweeps, model.Credits.Unswept; FindUnswept names the sweep).
//     enqueued() and snapshot() are not atomic scans; they are left out of
//     histories (Validate refuses them).
//
// # Unknown outcomes
//
// An operation whose caller went away mid-call (Unknown) follows porcupine's
// convention, as etcd's model does: its Return is math.MaxInt64 and the model
// accepts it with whatever output the model gives, so it may take effect at
// any point after its call, or (placed last) not at all. An unknown reserve
// may have claimed any free slot of its class under an epoch nobody learned,
// or nothing; its holder never uses a token it does not know, so only a
// sweep after the holder's exit can free that row
// (model.Credits.ReserveUnseen). An unknown sweep may free up to 32 rows. The
// recorder makes unknown outcomes by dropping the answer of an enqueue whose
// holder is killed while it runs; a backend makes them on its own when a
// call was sent and no answer came (a server's timeout): a holder that lost
// track of its reservation that way exits, so that a sweep frees the row,
// and an owner finishes a row whose take or finish it could not see. A take
// the backend did not send (ErrNotRun) changed nothing: the owner leaves
// that row enqueued for its next poll rather than finishing it, which would
// drop a payload no take answered.
//
// # Recording
//
// RecordTokenBucket and RecordCredits run one goroutine per client (one
// client id each) with random operation scripts against a Backend: the
// in-process implementation (InProcessTB, InProcessCr, through internal/sut),
// a port's driver over a pipe (package conform), or any other system that
// answers the model's operations, with ErrUnknown for a call whose outcome
// cannot be known. The workloads are defined once, here, for all of them.
// Call and return timestamps are drawn from one
// shared atomic counter immediately before and after the operation. Go's
// atomics are sequentially consistent, so a return stamp smaller than
// another call's stamp proves the first operation's memory accesses all
// precede the second's: the stamps cannot be reordered around the
// operation (the false violations of porcupine#40 come from timestamps that
// could). All goroutines of a recording wait at a barrier until every one
// of them is running.
//
// The workloads (TBWorkloads, CrWorkloads) cover a hot single key, a bucket
// that never runs dry under four takers, many keys with resets, a shared
// clock stepped by the callers with readings up to three steps stale (a
// yield between reading and calling), credits cycling through two racing
// owners, exhaustion of the internal class with holders dying while holding,
// four holders storming the lowest general slot, holders dying while their
// enqueue is in flight (answers dropped: unknown
// outcomes), a second thread of a holder releasing or sweeping against its
// enqueue, foreign-token releases, and the owner closing the table part way.
// Enqueued is polled by the owners to find work but never recorded.
//
// A holder that dies takes one of CrWorkload.MaxDead permits first and
// gives it back only once a sweep has run after its exit. The checker knows
// how many rows a sweep freed, not which, so a sweep freeing k of d
// candidate rows leaves C(d, k) possible states; when the sweeper fell
// behind and two dozen dead rows piled up, a 5,000-operation history did
// not check in 30 s, and through a pipe (where sweeps came only from the
// owner) a sweep that freed 8 rows went Unknown after 40 s. With the
// permits, d ≤ MaxDead (3) by construction.
//
// # Sizes (2-core machine, shared with other jobs; go test -bench)
//
//   - BenchmarkCheckTokenBucket, 10,000 operations, 8 clients, 16 keys:
//     15–22 ms per check; 100,000 operations: 0.45 s.
//   - BenchmarkCheckCredits, about 2,000 operations, 8 holders (cycling):
//     22–60 ms; about 10,000 operations: 0.2–0.3 s; about 30,000: 1.0–1.1 s.
//
// A credit-table history is one partition, so its cost depends on how many
// operations overlap at once rather than on length alone; the default
// workloads (150–1,100 operations, 6–8 holders) check in milliseconds.
// Operations with unknown outcomes stay open to the end of the history and
// widen the search; keep them to a few dozen per history.
//
// # Running
//
//	go run ./cmd/tollgate check                       # both primitives, about one minute
//	go run ./cmd/tollgate check --mutant tb-plain-store
//	go run ./cmd/tollgate check --replay FILE.json    # re-check a saved history
//	go run ./cmd/tollgate mutants -layer porcupine
//	go test ./linearizability -bench . -run '^$'
package linearizability
