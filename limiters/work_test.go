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
	versions := committedVersions(t)
	adapters := []limiters.Adapter{xtime.Adapter{}, uber.Adapter{}, redisrate.Adapter{}}
	for _, target := range limiters.Targets {
		if !slices.ContainsFunc(adapters, func(a limiters.Adapter) bool { return a.Module() == target.Module }) || len(versions[target.Module]) == 0 {
			t.Fatalf("%s: no adapter or no version in the committed run", target.Module)
		}
	}
	for _, quick := range []bool{false, true} {
		whole := wholeCampaign(t, adapters, versions, quick)
		if len(whole) < 300 {
			t.Fatalf("quick=%v: the campaign has %d units, want the real list (over 300)", quick, len(whole))
		}
		for n := 1; n <= 8; n++ {
			shardsPartition(t, adapters, versions, quick, whole, n)
		}
	}
	oneWorkloadOneShard(t, versions)
}

// committedVersions are the versions of each library in the committed
// run (results/results.json), in the order they first appear.
func committedVersions(t *testing.T) map[string][]string {
	t.Helper()
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
	return versions
}

// wholeCampaign is every unit of the unsharded run: each adapter's every
// workload at each version, all of which it must select.
func wholeCampaign(t *testing.T, adapters []limiters.Adapter, versions map[string][]string, quick bool) []string {
	t.Helper()
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
	return whole
}

// shardUnits is every unit shard sh selects.
func shardUnits(t *testing.T, adapters []limiters.Adapter, versions map[string][]string, quick bool, sh shard.Shard) []string {
	t.Helper()
	var units []string
	for _, a := range adapters {
		for _, v := range versions[a.Module()] {
			ws, err := limiters.Select(a.Module(), v, a.Workloads(quick), "", sh)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				units = append(units, limiters.Unit(a.Module(), v, w.Name))
			}
		}
	}
	return units
}

// shardsPartition checks that shards 1/n … n/n partition the whole
// campaign: no unit in two shards, none left out, no shard empty.
func shardsPartition(t *testing.T, adapters []limiters.Adapter, versions map[string][]string, quick bool, whole []string, n int) {
	t.Helper()
	in := map[string]int{}
	for i := 1; i <= n; i++ {
		sh := shard.Shard{I: i, N: n}
		units := shardUnits(t, adapters, versions, quick, sh)
		for _, u := range units {
			if j, twice := in[u]; twice {
				t.Fatalf("%s is in shards %d/%d and %d/%d", u, j, n, i, n)
			}
			in[u] = i
		}
		if len(units) == 0 {
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

// oneWorkloadOneShard: one workload's unit at each version runs in
// exactly one shard, and a workload that does not exist is refused.
func oneWorkloadOneShard(t *testing.T, versions map[string][]string) {
	t.Helper()
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
