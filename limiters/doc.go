// Package limiters checks third-party rate limiters — golang.org/x/time/rate,
// go.uber.org/ratelimit and github.com/go-redis/redis_rate/v10 — against
// the properties of spec/limiters.md, which assume nothing of tollgate's
// arithmetic: the admission bound (L1), no spurious refusal (L2), the pacer
// bound (L3) and linearizability against the library's own sequential
// behaviour (L4, porcupine through linearizability.Record).
//
// A library is driven by an Adapter (packages xtime, uber, redisrate),
// compiled once per released version in a generated module that pins that
// version (Build); the binary's main is Child, which runs the adapter's
// workloads and writes one Result per (workload, property) as a JSON line.
// Plan.Run drives the campaign over every version go list -m -versions
// reports; a violation of a deterministic workload is shrunk (Shrink) and
// written as a Counterexample that Replay re-runs on that version. Table,
// Summary and Plot render the results.
//
// Run is `tollgate limiters`: its Config has one field per flag, Resolve
// checks it, and Run runs the campaign (or one replay), writes the results
// and checks the verdicts -expect names (Mismatches); ExitCode is the
// command's exit code. A campaign's unit of work is one workload on one
// library version, named by Unit; -shard i/n keeps the units of one of n
// disjoint parts (Select), so n machines can share a campaign.
//
//	go run ./cmd/tollgate limiters                 # every version
//	go run ./cmd/tollgate limiters -shard 2/4      # a quarter of it
//	go run ./cmd/tollgate limiters --replay FILE   # one counterexample
//	bash scripts/limiters.sh                       # the committed run
package limiters
