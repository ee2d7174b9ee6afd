package fault

import (
	"slices"
	"testing"
)

// TestLists: All and AllRedis split the faults by backend, every fault has
// a package, and Parse finds every name.
func TestLists(t *testing.T) {
	if got := len(All()) + len(AllRedis()); got != int(numFaults)-1 || len(Every()) != got {
		t.Fatalf("All %d + AllRedis %d, Every %d, of %d faults", len(All()), len(AllRedis()), len(Every()), numFaults-1)
	}
	for _, f := range Every() {
		if f.Package() == "" {
			t.Errorf("%v has no package", f)
		}
		if f.Redis() != slices.Contains(AllRedis(), f) {
			t.Errorf("%v: Redis() is %v", f, f.Redis())
		}
		if g, err := Parse(f.String()); err != nil || g != f {
			t.Errorf("Parse(%q) = %v, %v", f, g, err)
		}
	}
	for _, c := range []struct {
		f              Fault
		pkg            string
		credits, redis bool
	}{
		{None, "", false, false}, {CrNoEpochPin, "impl/credits", true, false}, {TBNoClamp, "impl/tokenbucket", false, false},
		{RTBToString, "impl/redis/tokenbucket", false, true}, {numFaults, "", false, false},
	} {
		if c.f.Package() != c.pkg || c.f.Credits() != c.credits || c.f.Redis() != c.redis {
			t.Errorf("%v: package %q credits %v redis %v", c.f, c.f.Package(), c.f.Credits(), c.f.Redis())
		}
	}
}
