package interleave

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/shard"
)

// The shards of a selection are disjoint and together the whole selection,
// in its order, for the catalogue, the generated set and the directed runs
// (a directed run of a catalogue scenario is a run of its own, by name and
// schedule, and lands in the shard of its name).
func TestSelectShardsPartition(t *testing.T) {
	whole, err := Select("all", fault.None, shard.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(Catalogue()) + len(Systematic()) + len(EdgeScenarios()) + len(OwnerScenarios()) + len(DirectedScenarios()) + len(PairRuns()); len(whole) != want {
		t.Fatalf("all: %d scenarios, want %d", len(whole), want)
	}
	for _, n := range []int{1, 2, 3, 4} {
		shardOf := map[string]int{}
		for i := 1; i <= n; i++ {
			part, err := Select("all", fault.None, shard.Shard{I: i, N: n})
			if err != nil {
				t.Fatal(err)
			}
			if len(part) == 0 {
				t.Errorf("shard %d/%d is empty", i, n)
			}
			for _, s := range part {
				key := s.Name + "@" + s.Fixed()
				if j, ok := shardOf[key]; ok {
					t.Fatalf("%s is in shards %d/%d and %d/%d", key, j, n, i, n)
				}
				shardOf[key] = i
			}
		}
		if len(shardOf) != len(whole) {
			t.Fatalf("shards of %d hold %d scenarios, want %d", n, len(shardOf), len(whole))
		}
	}
}

func TestSelect(t *testing.T) {
	build.Need(t)
	ss, err := Select("cr-take-vs-finish, sys-cr-own-reserve-*,cr-take-vs-finish", fault.None, shard.Shard{})
	if err != nil || len(ss) < 2 || ss[0].Name != "cr-take-vs-finish" {
		t.Fatalf("names and a pattern: %d scenarios, %v", len(ss), err)
	}
	for _, s := range ss[1:] {
		if !strings.HasPrefix(s.Name, "sys-cr-own-reserve-") {
			t.Fatalf("the pattern selected %s (or a name repeated)", s.Name)
		}
	}
	f, err := fault.Parse("tb-peek-torn")
	if err != nil {
		t.Fatal(err)
	}
	ss, err = Select("all", f, shard.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.Primitive == Credits {
			t.Fatalf("a token-bucket mutant selects %s", s.Name)
		}
	}
	for spec, want := range map[string]string{
		"sys-[":        "-scenario",
		"no-such-*":    "no scenario matches",
		"no-such":      `no scenario "no-such"`,
		"cr-last-slot": "is not a credits mutant",
	} {
		if _, err := Select(spec, f, shard.Shard{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Select(%q) error %v, want it to say %q", spec, err, want)
		}
	}
}

func TestParseBudget(t *testing.T) {
	for in, want := range map[string]Budget{
		"":          {},
		"300":       {Schedules: 300},
		"10s":       {Time: 10 * time.Second},
		"5000, 10s": {Schedules: 5000, Time: 10 * time.Second},
	} {
		if got, err := ParseBudget(in); err != nil || got != want {
			t.Errorf("ParseBudget(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"lots", "0", "-5s", "300,"} {
		if _, err := ParseBudget(in); err == nil {
			t.Errorf("ParseBudget(%q) took it", in)
		}
	}
}

func TestOptionsCheck(t *testing.T) {
	if err := (Options{Strategy: PCT, Depth: 1}).Check(); err != nil {
		t.Error(err)
	}
	for _, o := range []Options{{Strategy: "bfs", Depth: 1}, {Strategy: DFS, Bound: -1, Depth: 1}, {Strategy: DFS}} {
		if o.Check() == nil {
			t.Errorf("%+v passes", o)
		}
	}
}
