package limiters_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tollgate/tollgate/internal/shard"
	"github.com/tollgate/tollgate/limiters"
	"github.com/tollgate/tollgate/limiters/redisrate"
	"github.com/tollgate/tollgate/limiters/uber"
	"github.com/tollgate/tollgate/limiters/xtime"
)

// TestShardsPartitionTheCampaign: over the campaign's real work list —
// every library, at every version of the committed every-version run
// (results/results.json), with its adapter's workloads, quick or not —
// the units Select keeps in shards 1/n … n/n are each unit once, and
// together the whole campaign; with -workload, that workload once.
func TestShardsPartitionTheCampaign(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("results", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rs []limiters.Result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	versions := map[string][]string{}
	for _, r := range rs {
		if !slices.Contains(versions[r.Library], r.Version) {
			versions[r.Library] = append(versions[r.Library], r.Version)
		}
	}
	adapters := []limiters.Adapter{xtime.Adapter{}, uber.Adapter{}, redisrate.Adapter{}}
	for _, target := range limiters.Targets {
		if !slices.ContainsFunc(adapters, func(a limiters.Adapter) bool { return a.Module() == target.Module }) || len(versions[target.Module]) == 0 {
			t.Fatalf("%s: no adapter or no version in the committed run", target.Module)
		}
	}
	for _, quick := range []bool{false, true} {
		var whole []string
		for _, a := range adapters {
			for _, v := range versions[a.Module()] {
				ws, err := limiters.Select(a.Module(), v, a.Workloads(quick), "", shard.Shard{})
				if err != nil || len(ws) != len(a.Workloads(quick)) {
					t.Fatalf("%s@%s: the whole run selects %d of %d workloads (%v)", a.Module(), v, len(ws), len(a.Workloads(quick)), err)
				}
				for _, w := range ws {
					whole = append(whole, limiters.Unit(a.Module(), v, w.Name))
				}
			}
		}
		if len(whole) < 300 {
			t.Fatalf("quick=%v: the campaign has %d units, want the real list (over 300)", quick, len(whole))
		}
		for n := 1; n <= 8; n++ {
			in := map[string]int{}
			for i := 1; i <= n; i++ {
				sh := shard.Shard{I: i, N: n}
				count := 0
				for _, a := range adapters {
					for _, v := range versions[a.Module()] {
						ws, err := limiters.Select(a.Module(), v, a.Workloads(quick), "", sh)
						if err != nil {
							t.Fatal(err)
						}
						for _, w := range ws {
							u := limiters.Unit(a.Module(), v, w.Name)
							if j, twice := in[u]; twice {
								t.Fatalf("%s is in shards %d/%d and %d/%d", u, j, n, i, n)
							}
							in[u] = i
							count++
						}
					}
				}
				if count == 0 {
					t.Errorf("shard %v of %d units is empty", sh, len(whole))
				}
			}
			for _, u := range whole {
				if _, ok := in[u]; !ok {
					t.Fatalf("quick=%v: %s is in none of the %d shards", quick, u, n)
				}
			}
			if len(in) != len(whole) {
				t.Fatalf("quick=%v: the %d shards hold %d units, the campaign %d", quick, n, len(in), len(whole))
			}
		}
	}
	// One workload: its unit at each version runs in exactly one shard.
	a := xtime.Adapter{}
	for _, v := range versions[a.Module()] {
		runs := 0
		for i := 1; i <= 4; i++ {
			ws, err := limiters.Select(a.Module(), v, a.Workloads(true), "tiny-rate", shard.Shard{I: i, N: 4})
			if err != nil {
				t.Fatal(err)
			}
			runs += len(ws)
		}
		if runs != 1 {
			t.Errorf("%s@%s: tiny-rate runs in %d of 4 shards, want 1", a.Module(), v, runs)
		}
	}
	if _, err := limiters.Select(a.Module(), "v0.9.0", a.Workloads(true), "nope", shard.Shard{I: 1, N: 2}); err == nil {
		t.Error("Select accepted a workload that does not exist")
	}
}
