package bench

import (
	"math"
	"testing"
)

// TestMannWhitney checks the test against values known independently of
// this code.
func TestMannWhitney(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		u, p float64
	}{
		// scipy.stats.mannwhitneyu's documented example (scipy ≥ 1.7,
		// "Examples"): mannwhitneyu(males, females) gives statistic=17.0,
		// pvalue=0.1111111111111111 (exact: no ties). By hand: U of the
		// females is 20−17 = 3; the orderings of 5+4 values with U ≤ 3 are
		// the partitions of 0..3 into at most 4 parts of at most 5, 1+1+2+3
		// = 7 of C(9,4) = 126, and 2·7/126 = 1/9.
		{"scipy docs", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 1.0 / 9},
		// Three rounds against three, every one faster: 2/C(6,3) = 0.1,
		// benchstat's "~ (p=0.100 n=3)" — the most three rounds can give.
		{"n=3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		// Five against five, separated: 2/C(10,5) = 2/252.
		{"n=5 separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252},
		// Two pairs the other way (5 > 4, 6 > 4): U = 2; the orderings with
		// U ≤ 2 are 1 + 1 + 2 = 4 of 252 on each side: 8/252.
		{"n=5 two inversions", []float64{1, 2, 3, 5, 6}, []float64{4, 7, 8, 9, 10}, 2, 8.0 / 252},
		// Six against six, five inversions (6 > 5; 10 > 5, 7, 8, 9): U ≤ 5 in 1+1+2+3+5+7 = 19 of
		// C(12,6) = 924 orderings; 2·19/924 = 0.0411.
		{"n=6 five inversions", []float64{1, 2, 3, 4, 6, 10}, []float64{5, 7, 8, 9, 11, 12}, 5, 38.0 / 924},
		// Ties, so the normal approximation (scipy's "asymptotic", with
		// use_continuity=True). By hand: pooled 1,2,2,2,3,3,4,5 ranks
		// 1,3,3,3,5.5,5.5,7,8; x's rank sum 12.5, U = 12.5 − 10 = 2.5;
		// tie groups of 3 and 2 give Σ(t³−t) = 30; σ² = 4·4/12 ·
		// (9 − 30/56) = 11.2857; z = (13.5 − 8 − 0.5)/σ = 1.48835;
		// p = erfc(z/√2) = 0.136658.
		{"ties", []float64{1, 2, 2, 3}, []float64{2, 3, 4, 5}, 2.5, 0.13665824773814753},
		// Identical samples: nothing to tell apart.
		{"all equal", []float64{7, 7, 7}, []float64{7, 7, 7}, 4.5, 1},
		{"empty", nil, []float64{1, 2}, 0, 1},
	} {
		u, p := MannWhitney(tc.x, tc.y)
		if u != tc.u || math.Abs(p-tc.p) > 1e-12 {
			t.Errorf("%s: MannWhitney(%v, %v) = U %v, p %.15g; want U %v, p %.15g", tc.name, tc.x, tc.y, u, p, tc.u, tc.p)
		}
		// The test is symmetric: swapping the samples swaps U for mn−U
		// and keeps p.
		u2, p2 := MannWhitney(tc.y, tc.x)
		if mn := float64(len(tc.x) * len(tc.y)); len(tc.x) > 0 && (u2 != mn-tc.u || math.Abs(p2-tc.p) > 1e-12) {
			t.Errorf("%s swapped: U %v, p %.15g; want U %v, p %.15g", tc.name, u2, p2, mn-tc.u, tc.p)
		}
	}
}

// TestMinRoundsForSignificance checks the constant's claim: the best
// p-value of n rounds against n falls below Alpha first at n = 4.
func TestMinRoundsForSignificance(t *testing.T) {
	for n := 2; n <= 6; n++ {
		x, y := make([]float64, n), make([]float64, n)
		for i := range n {
			x[i], y[i] = float64(i), float64(n+i)
		}
		_, p := MannWhitney(x, y)
		if reach := p < Alpha; reach != (n >= MinRoundsForSignificance) {
			t.Errorf("%d rounds against %d, fully separated: p = %.4f; MinRoundsForSignificance = %d says otherwise", n, n, p, MinRoundsForSignificance)
		}
	}
	if _, p := MannWhitney([]float64{1, 2, 3, 4, 6, 10}, []float64{5, 7, 8, 9, 11, 12}); p >= Alpha {
		t.Errorf("the default 6 rounds with five inversions: p = %.4f, not below %v as bench's docs say", p, Alpha)
	}
}
