package auto

import (
	"fmt"
	"path"
	"testing"

	"github.com/tollgate/tollgate/internal/shard"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestShardsPartitionTheCampaign: over the real mutants of the default
// packages, IDs are unique (a shard splits by ID), and for several n the
// shards 1/n … n/n keep each mutant in exactly one shard: together they
// are the whole campaign, and no mutant is judged twice.
func TestShardsPartitionTheCampaign(t *testing.T) {
	testlong.Skip(t)
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	targets, err := Options{}.targets(root)
	if err != nil {
		t.Fatal(err)
	}
	var all []Mutant
	seen := map[string]bool{}
	for _, dir := range dirsOf(targets) {
		p, err := LoadPackage(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range targets {
			if path.Dir(f) != dir {
				continue
			}
			ms, _, err := p.Generate(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if seen[m.ID()] {
					t.Fatalf("two mutants share the ID %q: a shard could not tell them apart", m.ID())
				}
				seen[m.ID()] = true
			}
			all = append(all, ms...)
		}
	}
	if len(all) < 500 {
		t.Fatalf("only %d mutants generated: not the real campaign", len(all))
	}
	for _, n := range []int{2, 3, 7} {
		keeps := make([]func(Mutant) bool, n)
		for i := range keeps {
			sh, err := shard.Parse(fmt.Sprintf("%d/%d", i+1, n))
			if err != nil {
				t.Fatal(err)
			}
			if keeps[i], err = (Options{Shard: sh}).filter(); err != nil || keeps[i] == nil {
				t.Fatalf("shard %v: filter %v, %v", sh, keeps[i] != nil, err)
			}
		}
		sizes := make([]int, n)
		for _, m := range all {
			in := 0
			for i, keep := range keeps {
				if keep(m) {
					in++
					sizes[i]++
				}
			}
			if in != 1 {
				t.Fatalf("n=%d: mutant %q is kept by %d shards, want 1", n, m.ID(), in)
			}
		}
		t.Logf("n=%d: %d mutants, shard sizes %v", n, len(all), sizes)
	}
}
