// Package bench measures what tollgate's compare-and-swap designs cost under
// contention, side by side with the designs a user would pick instead.
//
// Token bucket designs (TBDesigns) all take one token per operation from a
// keyed bucket through one small interface, Bucketer: tollgate's lock-free
// impl/tokenbucket; a map of buckets with one mutex per bucket; a sharded map
// whose whole take runs under the shard's mutex; golang.org/x/time/rate with
// one Limiter per key (AllowN with an injected time); and go.uber.org/ratelimit
// with one limiter per key, whose semantics differ (see UberRatelimit). The
// two mutex designs apply model.Take under their lock, so they implement
// exactly the spec's rule without restating it.
//
// Credit designs (CrDesigns) bound in-flight work to the table's 26 general
// slots: tollgate's impl/credits; a buffered-channel semaphore;
// golang.org/x/sync/semaphore.Weighted; a mutex-guarded slot table; and,
// for the full request cycle, the design the seed rejected, where requests
// travel to the owner through a mailbox channel.
//
// Every benchmark runs a fixed number of goroutines (not GOMAXPROCS
// multiples), each doing an equal share of b.N operations, and reports, next
// to ns/op, B/op and allocs/op:
//
//	p50-ns, p99-ns  latency of every 64th operation (includes ~20 ns of clock reads)
//	admit/op        fraction of operations admitted
//	fair-spread     (max-min)/mean of admissions per goroutine (mixed workload)
//	casretries/op   lost compare-and-swap races per operation; only in builds
//	                with -tags tollgate_stats, which count them in impl/
//
// Suite lists the cases; `go test -bench . ./bench` runs them through the
// testing package and `tollgate bench` runs them in process and writes the raw
// results, a ratio table and plots. MemoryPerKey measures the heap each idle
// bucket key costs.
package bench
