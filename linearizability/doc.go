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
//     any row it applies to — the only nondeterministic step, handled with
//     porcupine's NondeterministicModel, states listed in slot order.
//     enqueued() and snapshot() are not atomic scans; they are left out of
//     histories (Validate refuses them).
//
// # Unknown outcomes
//
// An operation whose caller went away mid-call (Unknown) follows porcupine's
// convention, as etcd's model does: its Return is math.MaxInt64 and the model
// accepts it with whatever output the model gives, so it may take effect at
// any point after its call, or (placed last) not at all. An unknown reserve
// cannot be checked (its token is unknown) and is refused.
//
// # Recording
//
// RecordTokenBucket and RecordCredits run one goroutine per client (one
// client id each) with random operation scripts against an implementation
// table through internal/sut. Call and return timestamps are drawn from one
// shared atomic counter immediately before and after the operation. Go's
// atomics are sequentially consistent, so a return stamp smaller than
// another call's stamp proves the first operation's memory accesses all
// precede the second's: the stamps cannot be reordered around the
// operation (the false violations of porcupine#40 come from timestamps that
// could).
//
// # Sizes
//
// Token-bucket histories partition by key and check quickly. A credit-table
// history is one partition whose search grows with the number of overlapping
// operations; see BenchmarkCheckCredits for measured sizes.
package linearizability
