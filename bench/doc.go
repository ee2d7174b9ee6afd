// Package bench measures what tollgate's compare-and-swap designs cost under
// contention, side by side with the designs a user would pick instead.
//
// Token bucket designs (TBDesigns) all take one token per operation from a
// keyed bucket through one small interface, Bucketer: tollgate's lock-free
// impl/tokenbucket; a map of buckets with one mutex per bucket; a sharded map
// whose whole take runs under the shard's mutex; golang.org/x/time/rate with
// one Limiter per key (AllowN with an injected time); and go.uber.org/ratelimit
// with one limiter per key. The two mutex designs apply model.Take under
// their lock, so they implement exactly the spec's rule without restating
// it. x/time/rate is a token bucket too, but its burst is an int, its clock
// has nanosecond resolution, and a time older than its last one counts as
// no time elapsed. go.uber.org/ratelimit is not a bucket: Take never refuses,
// it sleeps until the caller's turn, with no burst beyond its slack; it is
// measured only on the admitting workload, with a frozen clock whose Sleep
// returns at once, so its numbers are the cost of its compare-and-swap state
// update, not of pacing.
//
// Beside them the suite measures the floor (floor.go): the same shared
// word written the same number of times and nothing else — a 128-bit load
// and compare-and-swap loop per take on the key's word (floor-cas128), two
// per reserve+release (floor-cas128x2), one atomic add (floor-add) — so
// every tollgate ratio can be read against the cost of moving the cache
// line, and FLOOR/line=own measures the same with nothing shared.
//
// Credit designs (CrDesigns) bound in-flight work to the table's 26 general
// slots: tollgate's impl/credits; a buffered-channel semaphore;
// golang.org/x/sync/semaphore.Weighted; and a mutex-guarded slot table, all
// measured on reserve+release without blocking. The full request cycle
// (reserve → enqueue → owner take → reply → finish) compares tollgate's
// table, with an owner that sleeps on a payload-free doorbell, against the
// design the seed rejected, where requests travel to the owner through a
// mailbox channel, and against impl/credits' own Owner.Call polling every
// 100 µs.
//
// Every benchmark runs a fixed number of goroutines (not GOMAXPROCS
// multiples), each doing an equal share of N operations, and reports, next
// to ns/op, B/op and allocs/op:
//
//	p50-ns, p99-ns  latency of every 64th operation (includes ~20 ns of clock reads)
//	clock-ns        the p50 of the same sampling around an operation that does
//	                nothing: a p50 or p99 under twice it measures the timer,
//	                and RESULTS.md marks it "(timer)"
//	admit/op        fraction of operations admitted
//	fair-spread     (max-min)/mean of admissions per goroutine (mixed workload)
//	casretries/op   lost compare-and-swap races per operation; only in builds
//	                with -tags tollgate_stats, which count them in impl/
//	cpu-ns/op       process CPU time (all threads, GC included) per operation:
//	                steadier than ns/op on a machine shared with other work
//	sleeps/Mop      times a thread of the process went to sleep in the kernel
//	                (voluntary context switches), per million operations
//	lockwait-ns/op  time goroutines spent blocked on a lock, per operation
//	                (the runtime's sampled /sync/mutex/wait/total:seconds)
//	lockparks/op    blocks in sync.Mutex.Lock per operation, from the block
//	                profile; only with -tags tollgate_stats
//	fullwaits/op    (full cycle) times a caller found all 26 credits in flight
//	                and yielded before it could send, per request
//
// Every case runs in DefaultRounds (6) rounds, interleaved with the other
// designs at its goroutine count. A ratio is the ratio of the two designs'
// median ns/op over the rounds (benchstat's medians), and it is a verdict
// — a target met or missed — only when a Mann–Whitney U test of the two
// designs' rounds (MannWhitney, benchstat's test) finds the difference
// significant at p < 0.05; otherwise the target reads "~ (not
// significant, p=…, n=…)". Three rounds can never be significant (the
// smallest p is 0.10), four only without a single round out of order; six
// tolerate a few. The run ends by printing the targets' verdicts.
//
// The goroutine counts are exact (1, 2, 4, 8, 16, 64) rather than the
// GOMAXPROCS multiples of b.RunParallel, which cannot express 1 goroutine on
// a 2-core machine. The Admit and Refuse workloads inject a fixed clock, so
// every design does the same arithmetic; Mixed reads the real clock.
//
// A run fails instead of reporting numbers when the design broke the spec
// under the contention measured: after an Admit run the tokens missing from
// the buckets must equal the takes admitted (T1, catches lost updates such as
// the tb-plain-store mutant), and after reserve+release every release must
// have succeeded and every general slot be free again (C9, C14, catches
// cr-reserve-no-cas).
//
// Running:
//
//	go run ./cmd/tollgate bench                 # quick suite, 6 rounds, a few minutes, into a new directory
//	go run ./cmd/tollgate bench -out bench/results  # refresh the committed results
//	go run ./cmd/tollgate bench -full           # every dimension, about 5 minutes
//	go run -tags tollgate_stats ./cmd/tollgate bench -run 'keys=1/|CR/'  # with casretries/op
//	go test -run '^$' -bench 'Suite/TB/work=admit/' ./bench  # through go test, for benchstat
//	go test -run '^$' -bench MemoryPerKey -benchtime 1x ./bench
//
// Suite lists the cases; `tollgate bench` is Run, whose Config has one
// field per flag: it runs them in process (Runner) and writes the raw
// results, a ratio table and plots. A case runs under a B: go test's
// *testing.B, or the package's own driver, which times it as go test -bench
// does (N grown from 1 until a run takes the benchmark time, allocations
// and metrics counted between ResetTimer and StopTimer), so the command
// needs neither the testing package's flags nor a test binary.
// MemoryPerKey measures the heap each idle bucket key costs.
package bench
