package fault

import (
	"slices"
	"testing"
)

// TestLists: All, AllRedis and AllEtcd split the faults by backend, every
// fault has a package, and Parse finds every name.
func TestLists(t *testing.T) {
	if got := len(All()) + len(AllRedis()) + len(AllEtcd()); got != int(numFaults)-1 || len(Every()) != got || len(AllServer()) != len(AllRedis())+len(AllEtcd()) {
		t.Fatalf("All %d + AllRedis %d + AllEtcd %d, AllServer %d, Every %d, of %d faults", len(All()), len(AllRedis()), len(AllEtcd()), len(AllServer()), len(Every()), numFaults-1)
	}
	for _, f := range Every() {
		if f.Package() == "" {
			t.Errorf("%v has no package", f)
		}
		if f.Redis() != slices.Contains(AllRedis(), f) || f.Etcd() != slices.Contains(AllEtcd(), f) || f.Server() != !slices.Contains(All(), f) {
			t.Errorf("%v: Redis() %v, Etcd() %v, Server() %v", f, f.Redis(), f.Etcd(), f.Server())
		}
		if g, err := Parse(f.String()); err != nil || g != f {
			t.Errorf("Parse(%q) = %v, %v", f, g, err)
		}
	}
	for _, c := range []struct {
		f                    Fault
		pkg                  string
		credits, redis, etcd bool
	}{
		{None, "", false, false, false}, {Named("cr-no-epoch-pin"), "impl/credits", true, false, false}, {Named("tb-no-clamp"), "impl/tokenbucket", false, false, false},
		{Named("rtb-tostring"), "impl/redis/tokenbucket", false, true, false}, {Named("ecr-reserve-no-compare"), "impl/etcd/credits", true, false, true},
		{Named("etb-retry-on-unknown"), "impl/etcd/tokenbucket", false, false, true}, {numFaults, "", false, false, false},
	} {
		if c.f.Package() != c.pkg || c.f.Credits() != c.credits || c.f.Redis() != c.redis || c.f.Etcd() != c.etcd {
			t.Errorf("%v: package %q credits %v redis %v etcd %v", c.f, c.f.Package(), c.f.Credits(), c.f.Redis(), c.f.Etcd())
		}
	}
}
