package bench

import (
	"math"
	"slices"
)

// Alpha is the significance level of every comparison bench reports: a
// difference whose Mann–Whitney p-value is at or above it is "not
// significant" (benchstat's default, 0.05).
const Alpha = 0.05

// MinRoundsForSignificance is the fewest rounds per design at which a
// difference can be significant at Alpha: with n rounds of each of two
// designs and every round of one faster than every round of the other,
// the exact two-sided p-value is 2/C(2n, n) — 0.10 at 3 rounds (the
// smallest p benchstat can print for n=3), 0.029 at 4, 0.0079 at 5,
// 0.0022 at 6. Four rounds reach it only when no round at all overlaps;
// bench's default is 6, which tolerates five of the 36 pairs of rounds
// ordered the other way (p=0.041).
const MinRoundsForSignificance = 4

// MannWhitney is the Mann–Whitney U test (the Wilcoxon rank-sum test) of
// samples x and y: U is x's statistic, the number of pairs (xi, yj) with
// xi > yj plus half the pairs tied, and p the two-sided p-value of the null
// hypothesis that x and y come from one distribution. Without ties p is
// exact, from the distribution of U over every ordering of the m+n values;
// with ties it is the normal approximation with the tie correction of the
// variance and a continuity correction of 1/2 — scipy.stats.mannwhitneyu's
// "exact" and "asymptotic" methods. An empty sample gives p = 1 (nothing
// can be told apart).
func MannWhitney(x, y []float64) (u, p float64) {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return 0, 1
	}
	// Rank the pooled sample, ties sharing the mean of their ranks.
	type obs struct {
		v     float64
		fromX bool
	}
	all := make([]obs, 0, m+n)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var rankSumX, tieTerm float64 // Σ ranks of x; Σ (t³−t) over tie groups
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// Positions i..j-1 hold ranks i+1..j: their mean is (i+1+j)/2.
		rank := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			if all[k].fromX {
				rankSumX += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	mf, nf := float64(m), float64(n)
	u = rankSumX - mf*(mf+1)/2
	// The two-sided p-value is twice the tail beyond the larger of the two
	// statistics (U of x and U of y = mn − U), at most 1.
	big := max(u, mf*nf-u)
	if !ties && m+n <= exactLimit {
		return u, min(1, 2*exactUpperTail(m, n, int(math.Round(big))))
	}
	N := mf + nf
	sigma := math.Sqrt(mf * nf / 12 * ((N + 1) - tieTerm/(N*(N-1))))
	if sigma == 0 {
		return u, 1 // every value equal
	}
	z := (big - mf*nf/2 - 0.5) / sigma
	return u, min(1, math.Erfc(z/math.Sqrt2))
}

// exactLimit bounds the pooled size for which MannWhitney counts the exact
// distribution of U (its table has about (mn)·m·n entries at most).
const exactLimit = 60

// exactUpperTail is P(U ≥ k) for samples of m and n values, every ordering
// of them equally likely. ways[i][j][u] counts the orderings of i x's and
// j y's in which the x's win u pairs: the largest value is an x (winning
// over all j y's) or a y, so ways[i][j][u] = ways[i-1][j][u-j] +
// ways[i][j-1][u].
func exactUpperTail(m, n, k int) float64 {
	if k <= 0 {
		return 1
	}
	if k > m*n {
		return 0
	}
	prev := make([][]float64, n+1) // ways[i-1][j][·]
	cur := make([][]float64, n+1)
	for j := range n + 1 {
		prev[j] = make([]float64, m*n+1)
		cur[j] = make([]float64, m*n+1)
		prev[j][0] = 1 // no x: one ordering, no pair won
	}
	for i := 1; i <= m; i++ {
		for j := range n + 1 {
			clear(cur[j])
			for u := range i*j + 1 {
				w := 0.0
				if u >= j {
					w += prev[j][u-j]
				}
				if j > 0 {
					w += cur[j-1][u]
				}
				cur[j][u] = w
			}
		}
		prev, cur = cur, prev
	}
	var tail, total float64
	for u, w := range prev[n] {
		total += w
		if u >= k {
			tail += w
		}
	}
	return tail / total
}
