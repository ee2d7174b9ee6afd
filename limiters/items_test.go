package limiters

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/tollgate/tollgate/internal/shard"
)

// TestShardsPartitionTheCampaign: over the committed every-version run's
// libraries and versions (results/results.json, so no module proxy is
// asked), the shards 1/n … n/n of a plan keep each library version in
// exactly one shard, in the plan's order: together they are the whole
// campaign, and no version is built twice.
func TestShardsPartitionTheCampaign(t *testing.T) {
	data, err := os.ReadFile("results/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Library, Version string }
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	whole := Plan{Versions: map[string][]string{}}
	for _, r := range rows {
		if !slices.Contains(whole.Modules, r.Library) {
			whole.Modules = append(whole.Modules, r.Library)
		}
		if !slices.Contains(whole.Versions[r.Library], r.Version) {
			whole.Versions[r.Library] = append(whole.Versions[r.Library], r.Version)
		}
	}
	noProxy := func(t Target) ([]string, error) { return nil, fmt.Errorf("asked the proxy for %s", t.Module) }
	all, err := whole.Items(noProxy)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 20 || len(whole.Modules) != 3 {
		t.Fatalf("%d versions of %d libraries: not the committed campaign", len(all), len(whole.Modules))
	}
	for _, n := range []int{2, 3, 5} {
		var union []Item
		for i := 1; i <= n; i++ {
			p := whole
			if p.Shard, err = shard.Parse(fmt.Sprintf("%d/%d", i, n)); err != nil {
				t.Fatal(err)
			}
			part, err := p.Items(noProxy)
			if err != nil {
				t.Fatal(err)
			}
			union = append(union, part...)
		}
		slices.SortFunc(union, func(a, b Item) int { return slices.Index(all, a) - slices.Index(all, b) })
		if !slices.Equal(union, all) {
			t.Fatalf("n=%d: the shards together hold %d items, the campaign %d (or some twice)", n, len(union), len(all))
		}
	}
}
