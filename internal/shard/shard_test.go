package shard

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
	}{
		{"", Shard{}},
		{"1/1", Shard{1, 1}},
		{"2/4", Shard{2, 4}},
		{"4/4", Shard{4, 4}},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, nil", c.in, got, err, c.want)
		}
		if got.String() != c.in {
			t.Errorf("Parse(%q).String() = %q", c.in, got.String())
		}
	}
	for in, rule := range map[string]string{
		"0/3":   "-shard 0/3: i must be in 1..n",
		"4/3":   "-shard 4/3: i must be in 1..n",
		"-1/3":  "-shard -1/3: i must be in 1..n",
		"x/3":   "-shard x/3: i must be in 1..n",
		"1/0":   "-shard 1/0: n must be an integer ≥ 1",
		"1/y":   "-shard 1/y: n must be an integer ≥ 1",
		"3":     "-shard 3: want i/n",
		"1/2/3": "-shard 1/2/3: n must be",
	} {
		_, err := Parse(in)
		if err == nil || !strings.HasPrefix(err.Error(), rule) {
			t.Errorf("Parse(%q) error = %v; want prefix %q", in, err, rule)
		}
	}
}

// Every name is in exactly one of the n shards, for every n; the whole run
// has every name; and no shard of a sizeable set is empty.
func TestHasPartitions(t *testing.T) {
	var names []string
	for k := range 200 {
		names = append(names, fmt.Sprintf("item-%d", k))
	}
	for _, name := range names {
		if !(Shard{}).Has(name) || !(Shard{1, 1}).Has(name) {
			t.Fatalf("the whole run lacks %q", name)
		}
	}
	for n := 1; n <= 7; n++ {
		count := make([]int, n+1)
		for _, name := range names {
			in := 0
			for i := 1; i <= n; i++ {
				if (Shard{i, n}).Has(name) {
					in++
					count[i]++
				}
			}
			if in != 1 {
				t.Fatalf("%q is in %d of the %d shards", name, in, n)
			}
		}
		for i := 1; i <= n; i++ {
			if count[i] == 0 {
				t.Errorf("shard %d/%d of %d names is empty", i, n, len(names))
			}
		}
	}
}

// Membership depends on the name alone: fixed values pin the hash, so a
// change that would reshuffle CI's shards fails here.
func TestHasStable(t *testing.T) {
	got := ""
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		for i := 1; i <= 3; i++ {
			if (Shard{i, 3}).Has(name) {
				got += fmt.Sprint(i)
			}
		}
	}
	const want = "221211"
	if got != want {
		t.Errorf("shards of a..f in 3 = %s, want %s", got, want)
	}
}
