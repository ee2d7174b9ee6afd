package conform

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
)

// The conformance harness is a checking layer of the mutants table: it runs
// the Go driver built with a fault, in process, through all three suites of
// the fault's primitive.
func init() {
	mutant.Register(mutant.Layer{Name: "conform", Hunt: conformHunt})
}

// The layer sees (mutant.Layer.Sees) the faults a protocol-level check is
// expected to kill in a few seconds: those whose patch names conform on its
// Caught-by line (fault.Fault.CaughtBy). tb-plain-store, tb-fail-closed and tb-cas-one-half
// need two takes to overlap inside one compare-and-swap window: the
// concurrent suite with 16 clients of the in-process driver killed them with
// each of the seeds 1 to 13. cr-gen-wrap and cr-box-before-pin show in the
// credit vectors (a slot reused eight times; a stale token's enqueue).
// cr-two-write-enqueue leaves a state no protocol answer shows (a reserved
// row holding a payload). cr-reserve-no-cas, which survived every run before
// it yielded in its window, now dies in the concurrent suite (seeds 1 to 6).
// tb-reclaim-no-floor shows in the T12 vectors; tb-floor-after-kill and
// tb-unlink-live in the concurrent suite's idle-keys workload, where takes
// race reclaims. cr-reserve-strands dies in the concurrent suite too (seeds
// 1 to 3): a sweep after a holder's exit leaves its stranded row reserved
// (C17).

func conformHunt(f fault.Fault, budget time.Duration, seed uint64) mutant.Outcome {
	prim := PrimTokenBucket
	if f.Credits() {
		prim = PrimCredits
	}
	start := time.Now()
	out := mutant.Outcome{Seed: seed}
	// The concurrent suite before the random one: the faults only it can see
	// are then killed without waiting for the random suite's budget.
	for _, suite := range []string{SuiteVectors, SuiteConcurrent, SuiteRandom} {
		rep := Run(Config{
			Serve: func(in io.Reader, w, logw io.Writer) error { return ServeGo(in, w, logw, f) },
			Seed:  seed, Budget: max(budget/2, 100*time.Millisecond), Clients: 16, Timeout: 10 * time.Second,
			Suites: []string{suite}, Primitives: []string{prim}, Dir: mutant.Dir("tollgate-conform-failures"),
		})
		for _, r := range rep.Results {
			if len(r.Failures) == 0 {
				continue
			}
			fl := r.Failures[0]
			out.Killed = true
			out.Property = r.Suite + " " + fl.Case
			switch {
			case fl.Breaks.Invariant != "":
				out.Property = r.Suite + " " + fl.Breaks.Invariant
			case len(fl.Covers) > 0:
				out.Property = r.Suite + " " + strings.Join(fl.Covers, ",")
			}
			out.Elapsed = time.Since(start)
			out.Replay = fmt.Sprintf("go run ./cmd/tollgate conform --seed %d --suites %s --primitives %s -- go run ./cmd/tollgate driver --mutant %s", seed, suite, prim, f)
			var b strings.Builder
			rep.Print(&b, "")
			out.Detail = firstLines(b.String(), 12)
			return out
		}
		if time.Since(start) > budget {
			break
		}
	}
	out.Elapsed = time.Since(start)
	return out
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
