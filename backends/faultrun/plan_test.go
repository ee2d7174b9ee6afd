package faultrun

import (
	"math"
	"testing"
	"time"
)

// TestPairChance: the share of windows Draw gives two faults is what
// PairChance says, over 4,000 windows, for atom sets with and without
// faults drawn alone and with faults that share what they act on.
func TestPairChance(t *testing.T) {
	hold := [2]time.Duration{time.Second, 2 * time.Second}
	for _, tc := range []struct {
		name  string
		atoms []Atom
		want  float64
	}{
		{"all pairable", []Atom{{Name: "a", Hold: hold, On: "x"}, {Name: "b", Hold: hold, On: "y"}}, PairShare},
		{"two alone of six", []Atom{{Name: "a", Hold: hold, On: "x"}, {Name: "b", Hold: hold, On: "y"}, {Name: "c", Hold: hold, On: "z"},
			{Name: "d", Hold: hold, On: "w"}, {Name: "e", On: "m", Single: true}, {Name: "f", Hold: hold, On: "n", Single: true}}, PairShare * 4 / 6},
		{"one thing only", []Atom{{Name: "a", Hold: hold, On: "x"}, {Name: "b", Hold: hold, On: "x"}, {Name: "c", On: "y", Single: true}}, 0},
	} {
		if got := PairChance(tc.atoms); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: PairChance %v, want %v", tc.name, got, tc.want)
		}
		pairs := 0
		const n = 4000
		for _, w := range Plan(9, n, Prims, tc.atoms) {
			if len(w.Steps) == 2 {
				pairs++
			}
		}
		if got := float64(pairs) / n; math.Abs(got-tc.want) > 0.03 {
			t.Errorf("%s: %d of %d windows drawn with two faults (%.3f), PairChance says %.3f", tc.name, pairs, n, got, tc.want)
		}
	}
}
