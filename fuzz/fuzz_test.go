package fuzz_test

import (
	"flag"
	"testing"

	"github.com/tollgate/tollgate/internal/diff"
	"github.com/tollgate/tollgate/internal/fault"
)

var faultFlag = flag.String("diff.fault", "", "run the targets against this mutant (replays a kill from the mutants table)")

func faults(t testing.TB) fault.Fault {
	t.Helper()
	if *faultFlag == "" {
		return fault.None
	}
	f, err := fault.Parse(*faultFlag)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func target(f *testing.F, run func([]byte, fault.Fault, diff.Options) *diff.Failure) {
	set := faults(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if fail := run(data, set, diff.Options{}); fail != nil {
			t.Fatal(fail.Replay())
		}
	})
}

// FuzzCredits decodes bytes into credit-table operations and compares the
// implementation with the model after every one (C1–C14).
func FuzzCredits(f *testing.F) { target(f, diff.RunCreditsBytes) }

// FuzzTokenBucket decodes bytes into token-bucket operations and compares
// the implementation with the model after every one (T1–T10).
func FuzzTokenBucket(f *testing.F) { target(f, diff.RunTokenBucketBytes) }

// FuzzHostile drives the token bucket with limits, costs and clocks from
// raw bit patterns: every answer must be a clear error (T9) or the model's,
// with tokens finite and within [0, capacity] (T3, T6).
func FuzzHostile(f *testing.F) { target(f, diff.RunHostileBytes) }
