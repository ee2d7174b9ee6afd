package fuzz_test

import (
	"flag"
	"testing"

	"github.com/tollgate/tollgate/fuzz"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// faults returns the mutant named by -diff.fault (declared beside the rapid
// machines, in this package's internal tests: one flag for both front ends),
// fault.None when it is empty.
func faults(t testing.TB) fault.Fault {
	t.Helper()
	name := flag.Lookup("diff.fault").Value.String()
	if name == "" {
		return fault.None
	}
	f, err := fault.Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	build.Need(t)
	return f
}

func target(f *testing.F, run func([]byte, fault.Fault, fuzz.Options) *fuzz.Failure) {
	set := faults(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if fail := run(data, set, fuzz.Options{}); fail != nil {
			t.Fatal(fail.Replay())
		}
	})
}

// FuzzCredits decodes bytes into credit-table operations and compares the
// implementation with the model after every one (C1–C14).
func FuzzCredits(f *testing.F) { target(f, fuzz.RunCreditsBytes) }

// FuzzTokenBucket decodes bytes into token-bucket operations and compares
// the implementation with the model after every one (T1–T10).
func FuzzTokenBucket(f *testing.F) { target(f, fuzz.RunTokenBucketBytes) }

// FuzzHostile drives the token bucket with limits, costs and clocks from
// raw bit patterns: every answer must be a clear error (T9) or the model's,
// with tokens finite and within [0, capacity] (T3, T6).
func FuzzHostile(f *testing.F) { target(f, fuzz.RunHostileBytes) }
