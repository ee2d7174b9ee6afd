package fuzz

import (
	"flag"
	"testing"

	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

var faultFlag = flag.String("diff.fault", "", "run the rapid machines against this mutant (replays a kill from the mutants table)")

// faults returns the set named by -diff.fault (empty: the real
// implementation).
func faults(t *testing.T) fault.Fault {
	t.Helper()
	if *faultFlag == "" {
		return fault.None
	}
	f, err := fault.Parse(*faultFlag)
	if err != nil {
		t.Fatal(err)
	}
	build.Need(t)
	t.Logf("running against mutant %v: this run is expected to fail", f)
	return f
}

// TestRapidCredits is the credit table's state machine (C1–C14) against
// the model.
func TestRapidCredits(t *testing.T) {
	rapid.Check(t, CreditsProp(faults(t), options(), nil))
}

// TestRapidTokenBucket is the token bucket's state machine (T1–T10) against
// the model.
func TestRapidTokenBucket(t *testing.T) {
	rapid.Check(t, TokenBucketProp(faults(t), options(), nil))
}

// TestRapidHostile drives the token bucket with hostile numbers (T3, T9).
func TestRapidHostile(t *testing.T) {
	rapid.Check(t, HostileProp(faults(t), options(), nil))
}

var propsOnly = flag.Bool("diff.props-only", false, "skip the comparison with the model's answers; check the named properties only")

func options() Options { return Options{PropertiesOnly: *propsOnly} }
