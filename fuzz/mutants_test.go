package fuzz

import (
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
)

// Budgets for the layer tests: every sequentially visible mutant must die
// well inside killBudget (they die in milliseconds; the slack is for -race
// on a busy machine), and the concurrency-only ones must survive
// surviveBudget, which proves SequentiallyVisible is not hiding a kill.
const (
	killBudget    = 5 * time.Second
	surviveBudget = 100 * time.Millisecond
	layerSeed     = 1
)

func testLayer(t *testing.T, name string, hunt func(fault.Fault, time.Duration, uint64) mutant.Outcome) {
	build.Need(t)
	t.Setenv("TMPDIR", t.TempDir()) // the fuzz hunts' crasher files go where t.TempDir removes them
	defer func(d time.Duration) { HuntShrinkTime = d }(HuntShrinkTime)
	HuntShrinkTime = 100 * time.Millisecond // the kill is what counts here
	for _, f := range fault.All() {
		t.Run(f.String(), func(t *testing.T) {
			if !SequentiallyVisible(f) {
				out := hunt(f, surviveBudget, layerSeed)
				if out.Killed {
					t.Fatalf("%s layer killed %v, which SequentiallyVisible says only shows under concurrency: %s\nreplay: %s\n%s",
						name, f, out.Property, out.Replay, out.Detail)
				}
				return
			}
			out := hunt(f, killBudget, layerSeed)
			if !out.Killed {
				t.Fatalf("%s layer let %v survive %v (seed %d)", name, f, killBudget, layerSeed)
			}
			t.Logf("killed by %s in %v; replay: %s", out.Property, out.Elapsed, out.Replay)
		})
	}
}

// TestRapidLayerKillsSequentialMutants proves the rapid machines have
// teeth: every mutant visible to one operation at a time dies.
func TestRapidLayerKillsSequentialMutants(t *testing.T) {
	testlong.Skip(t)
	testLayer(t, "rapid", HuntRapid)
}

// TestFuzzLayerKillsSequentialMutants is the same for the fuzz decoders
// (committed corpus first, then random inputs).
func TestFuzzLayerKillsSequentialMutants(t *testing.T) {
	testlong.Skip(t)
	testLayer(t, "fuzz", HuntFuzz)
}

// TestFuzzLayerRandomInputsKill runs the fuzz layer's random inputs alone
// (no corpus), so the kills above do not rest on the committed seeds only.
func TestFuzzLayerRandomInputsKill(t *testing.T) {
	build.Need(t)
	for _, f := range fault.All() {
		if !SequentiallyVisible(f) {
			continue
		}
		t.Run(f.String(), func(t *testing.T) {
			start := time.Now()
			for i := 0; time.Since(start) < killBudget; i++ {
				tg := fuzzTargets(f)[i%len(fuzzTargets(f))]
				if fail := tg.run(RandomInput(layerSeed, i), f, Options{}); fail != nil {
					t.Logf("random input %d killed it in %v: %s", i, time.Since(start), fail.Property)
					return
				}
			}
			t.Fatalf("no random input killed %v within %v", f, killBudget)
		})
	}
}
