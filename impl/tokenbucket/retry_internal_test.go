package tokenbucket

import (
	"math"
	"testing"
	"time"
)

// TestRetryEstimateAnswersAlone pins RetryAfterAt's fast path without its
// fallback: for every bucket of a grid of ordinary limits, fill levels,
// costs and clocks (stale ones included), retryEstimate answers by itself,
// and with bisection's answer. The grid holds answers of 1 ms, answers the
// closed form gets exactly, and answers one above and one below it, so each
// candidate the estimate tries is needed somewhere. Without this test a
// broken estimate would only cost time: the bisection behind it hides any
// error of its own.
func TestRetryEstimateAnswersAlone(t *testing.T) {
	offsets := map[int64]int{}
	ones, cases := 0, 0
	for _, capacity := range []float64{1, 2.5, 3, 7, 10, 100, 1e4} {
		for _, rate := range []float64{0.001, 0.3, 1, 2, 3, 7.5, 1000, 1e5} {
			lim := Limits{Capacity: capacity, RefillPerSecond: rate}
			for _, fill := range []float64{0, 0.1, 0.37, 0.5, 0.99, 0.9999} {
				for _, costFrac := range []float64{0.2, 0.5, 1} {
					cost := capacity * costFrac
					for _, last := range []int64{0, 350, 1_000_000_000_000} {
						for _, ahead := range []int64{-500, -1, 0, 1, 123, 907} {
							now := last + ahead
							lo, hi := packState(capacity*fill, last)
							have := refill(lo, hi, lim, now)
							if have >= cost {
								continue
							}
							cases++
							w, ok := retryEstimate(lo, hi, lim, now, cost, have)
							want := retrySearch(lo, hi, lim, now, cost)
							if !ok || w != want {
								t.Fatalf("limits %+v, tokens %v at %d, cost %v, now %d: the estimate gave (%d, %v), bisection %d",
									lim, capacity*fill, last, cost, now, w, ok, want)
							}
							closed := int64(math.Ceil((cost-have)/rate*1000)) + int64(elapsed(now, last))
							offsets[want-closed]++
							if want == 1 {
								ones++
							}
						}
					}
				}
			}
		}
	}
	// At the end of the clock's range the answer can be the largest wait
	// itself: the estimate must answer that too.
	lim := Limits{Capacity: 1, RefillPerSecond: 1}
	for _, limit := range []int64{1000, 5000} {
		now := int64(math.MaxInt64) - limit
		lo, hi := packState(0, now)
		w, ok := retryEstimate(lo, hi, lim, now, 1, 0)
		want := retrySearch(lo, hi, lim, now, 1)
		if want != 1000 || !ok || w != want {
			t.Errorf("now = MaxInt64 - %d: the estimate gave (%d, %v), bisection %d, want 1000", limit, w, ok, want)
		}
	}
	t.Logf("%d cases: answer − closed form %v; %d answers of 1 ms", cases, offsets, ones)
	for _, d := range []int64{-1, 0, 1} {
		if offsets[d] == 0 {
			t.Errorf("no case where the answer is the closed form %+d: the grid does not need every candidate", d)
		}
	}
	if ones == 0 {
		t.Error("no case with an answer of 1 ms")
	}
}

// TestMillisSaturates: millis is exact up to the largest whole number of
// milliseconds a Duration holds, and saturates only past it.
func TestMillisSaturates(t *testing.T) {
	top := int64(math.MaxInt64 / time.Millisecond)
	for w, want := range map[int64]time.Duration{0: 0, 1: time.Millisecond, top: time.Duration(top) * time.Millisecond, top + 1: math.MaxInt64, math.MaxInt64: math.MaxInt64} {
		if got := millis(w); got != want {
			t.Errorf("millis(%d) = %d, want %d", w, got, want)
		}
	}
}

// TestRetryAfterOfIsRetryAfterAt: RetryAfterOf, given a bucket's tokens and
// timestamp, answers exactly what the table holding that bucket answers
// (impl/redis/tokenbucket relies on it for its retry_after).
func TestRetryAfterOfIsRetryAfterAt(t *testing.T) {
	lim := Limits{Capacity: 7, RefillPerSecond: 3}
	tab := New[string]()
	now := int64(1_000)
	checked := 0
	for i := 0; i < 400; i++ {
		cost := float64(1+i%13) / 2
		if cost > lim.Capacity {
			cost = lim.Capacity
		}
		if _, _, err := tab.TakeAt(now, "k", lim, cost); err != nil {
			t.Fatal(err)
		}
		lo, hi := tab.load("k")
		tokens, last := math.Float64frombits(lo&^present), int64(hi)
		for _, at := range []int64{now - 700, now, now + 1, now + 333} {
			want, err := tab.RetryAfterAt(at, "k", lim, cost)
			if err != nil {
				t.Fatal(err)
			}
			if got := RetryAfterOf(tokens, last, lim, cost, at); got != want {
				t.Fatalf("after take %d: RetryAfterOf(%v, %d, cost %v, at %d) = %d, the table answers %d", i, tokens, last, cost, at, got, want)
			}
			if want > 0 {
				checked++
			}
		}
		now += int64(i % 450)
	}
	if checked < 100 {
		t.Fatalf("only %d of the comparisons had a wait to compare", checked)
	}
}

// TestRefillOfIsPeekAt: RefillOf, given a bucket's tokens and timestamp,
// answers exactly what the table holding that bucket answers to PeekAt
// (impl/etcd/tokenbucket decides its takes with it), at clocks behind, at
// and past the timestamp, full and not.
func TestRefillOfIsPeekAt(t *testing.T) {
	lim := Limits{Capacity: 7, RefillPerSecond: 3}
	tab := New[string]()
	now := int64(1_000)
	partial := 0
	for i := 0; i < 400; i++ {
		cost := min(float64(1+i%13)/2, lim.Capacity)
		if _, _, err := tab.TakeAt(now, "k", lim, cost); err != nil {
			t.Fatal(err)
		}
		lo, hi := tab.load("k")
		tokens, last := math.Float64frombits(lo&^present), int64(hi)
		for _, at := range []int64{now - 700, now, now + 1, now + 333, now + 5_000} {
			want, err := tab.PeekAt(at, "k", lim)
			if err != nil {
				t.Fatal(err)
			}
			if got := RefillOf(tokens, last, lim, at); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("after take %d: RefillOf(%v, %d, at %d) = %v, the table answers %v", i, tokens, last, at, got, want)
			}
			if want < lim.Capacity && want > tokens {
				partial++
			}
		}
		now += int64(i % 450)
	}
	if partial < 100 {
		t.Fatalf("only %d of the comparisons refilled part of the way", partial)
	}
}
