package linearizability

import (
	"errors"
	"fmt"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
)

// The porcupine layer of the mutant table. It sees (mutant.Layer.Sees) the
// faults whose patch names porcupine on its Caught-by line
// (fault.Fault.CaughtBy). Each fault it names changes an answer that some recorded workload
// observes (cr-class-off-by-one, for instance, when enqueued rows pile up
// behind the single owner of owner-dies until the general class is full).
// Not named: three whose window free-running goroutines on two cores do not
// hit reliably within a budget, cr-one-scan (a release and a reserve must
// both land inside one scan), tb-trie-plain-append (two keys of equal
// 64-bit hash) and tb-sweep-skips-frozen (two reclaims must overlap one's
// compaction of a node holding a key the two judge differently; the
// idle-keys workload found it in most 10-second hunts, but survived 2 of 60
// under -race beside CI); cr-twin-enqueue-lost, since no workload has two
// calls of one holder in flight (a client is one holder and makes one call
// at a time), and cr-published-late for the same reason (the flag it sets
// late is read only by such a pair); and cr-enqueued-torn: the owner's
// list must be between its two loads while another call finishes its row
// and the slot is reserved and enqueued again, which five 10-second hunts
// (seeds 1 to 5) never caught. The interleaving explorer is the layer for
// all of these. cr-reserve-strands is seen: the row it strands stays
// reserved through a sweep called after its holder's reserve and exit
// returned, which C17 refuses (OwedBySweeps); the cycling workload shows it
// in its first history.
func init() {
	mutant.Register(mutant.Layer{Name: "porcupine", Hunt: Hunt})
}

// HuntTimeout is the most of a hunt's budget porcupine spends on one
// history. A hunt gives each history a quarter of its budget, at least
// huntMinTimeout and at most HuntTimeout: a mutant's illegal history can
// send porcupine's search past any budget (it ends Unknown), and a hunt
// that spent its whole budget on that one history would report the
// mutant only if the next history came in time.
const HuntTimeout = 10 * time.Second

// huntMinTimeout is the least porcupine spends on one history of a hunt.
const huntMinTimeout = time.Second

// huntTimeout is porcupine's budget for one history of a hunt of budget.
func huntTimeout(budget time.Duration) time.Duration {
	return min(max(budget/4, huntMinTimeout), HuntTimeout)
}

// Hunt records and checks histories of f's primitive against a table
// carrying f, cycling through the workloads, until one is Illegal or budget
// has passed. The failing history and its visualization are written under
// $TMPDIR/tollgate-porcupine.
func Hunt(f fault.Fault, budget time.Duration, seed uint64) mutant.Outcome {
	p := Plan{
		Primitive: PrimitiveTokenBucket, Duration: budget, Seed: seed,
		Fault: f, Mutant: f.String(), Timeout: huntTimeout(budget),
		Dir: mutant.Dir("tollgate-porcupine"), StopOnIllegal: true,
	}
	if f.Credits() {
		p.Primitive = PrimitiveCredits
	}
	t, err := Run(p, nil)
	out := mutant.Outcome{Seed: seed, Elapsed: t.Elapsed}
	if errors.Is(err, ErrPanicked) {
		// The table's own code panicked on the state the mutant left: seen.
		out.Killed, out.Property, out.Detail = true, "panic", err.Error()
		return out
	}
	if err != nil {
		out.Detail = err.Error()
		return out
	}
	if t.Illegal == 0 {
		if t.Unknown > 0 {
			out.Detail = fmt.Sprintf("%d of %d histories timed out (Unknown)", t.Unknown, t.Histories)
		}
		return out
	}
	rep := t.First
	out.Killed, out.Seed = true, t.FirstSeed
	out.Property = rep.Invariant // T11 or C16 from porcupine, C3 or C17 found beside it
	out.Detail = fmt.Sprintf("%s after %d histories (%s, seed %d): %s\nvisualization: %s\nhistory: %s",
		rep.Result, t.Histories, t.FirstWorkload, t.FirstSeed, rep.Detail, rep.HTMLPath, rep.JSONPath)
	out.Replay = "go run ./cmd/tollgate check --replay " + rep.JSONPath
	return out
}
