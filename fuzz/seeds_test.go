package fuzz_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tollgate/tollgate/fuzz"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

var writeSeeds = flag.Bool("fuzz.write-seeds", false, "regenerate the generated seed files under testdata/fuzz (kill-<mutant>, random-<n>)")

type runner = func([]byte, fault.Fault, fuzz.Options) *fuzz.Failure

var runners = map[string]runner{
	"FuzzCredits":     fuzz.RunCreditsBytes,
	"FuzzTokenBucket": fuzz.RunTokenBucketBytes,
	"FuzzHostile":     fuzz.RunHostileBytes,
}

// shortestKill searches random inputs for one that kills f under run and
// returns its shortest failing prefix (decoding is prefix-closed: a prefix
// is the same operations, fewer of them).
func shortestKill(run runner, f fault.Fault, tries int) []byte {
	var best []byte
	for i := range tries {
		in := fuzz.RandomInput(1, i)
		if run(in, f, fuzz.Options{}) == nil {
			continue
		}
		lo, hi := 0, len(in) // run(in[:hi]) fails
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if run(in[:mid], f, fuzz.Options{}) != nil {
				hi = mid
			} else {
				lo = mid
			}
		}
		// Failure need not be monotone in the prefix; scan down from hi.
		for n := hi; n > 0; n-- {
			if run(in[:n], f, fuzz.Options{}) != nil {
				hi = n
			}
		}
		if best == nil || hi < len(best) {
			best = in[:hi]
		}
	}
	return best
}

// TestWriteSeeds regenerates the generated part of the seed corpora: for
// every mutant a target can see, the shortest input found that kills it
// (so the committed corpus alone kills every such mutant), plus a few random
// inputs. Hand-written seeds and crashers are left alone. Run with
// go test ./fuzz -run TestWriteSeeds -fuzz.write-seeds.
func TestWriteSeeds(t *testing.T) {
	build.Need(t)
	if !*writeSeeds {
		t.Skip("run with -fuzz.write-seeds to regenerate the seed corpora")
	}
	for _, name := range fuzz.Targets {
		run := runners[name]
		dir := filepath.Join("testdata", "fuzz", name)
		write := func(file string, in []byte) {
			if err := os.WriteFile(filepath.Join(dir, file), fuzz.Format(in), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s (%d bytes)", filepath.Join(dir, file), len(in))
		}
		for _, f := range fault.All() {
			if f.Credits() != (name == "FuzzCredits") || !fuzz.SequentiallyVisible(f) {
				continue
			}
			if in := shortestKill(run, f, 300); in != nil {
				write("kill-"+f.String(), in)
			} else {
				t.Logf("%s: no input of 300 kills %v", name, f)
			}
		}
		for i, n := range []int{7, 64, 500} {
			write(fmt.Sprintf("random-%d", i), fuzz.RandomInput(2, i)[:min(n, len(fuzz.RandomInput(2, i)))])
		}
	}
}
