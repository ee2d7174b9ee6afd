package tokenbucket_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/model"
)

// TestAdmitMatchesModel: AdmitAt answers what the model's Take answers
// and, on a refusal, the model's RetryAfter of the same bucket at the same
// reading (T1, T2, T7), over random sessions of admits, takes and resets
// with clocks that go back as well as forward.
func TestAdmitMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for session := range 200 {
		tb := tokenbucket.New[string]()
		buckets := map[string]model.Bucket{}
		lim := tokenbucket.Limits{Capacity: float64(1 + rng.IntN(10)), RefillPerSecond: []float64{0.001, 0.5, 3, 1000}[rng.IntN(4)]}
		mlim := model.Limits{Capacity: lim.Capacity, RefillPerSecond: lim.RefillPerSecond}
		now := int64(rng.IntN(1000))
		for op := range 60 {
			key := []string{"a", "b"}[rng.IntN(2)]
			cost := float64(1+rng.IntN(int(lim.Capacity))) / float64(1+rng.IntN(2))
			now += int64(rng.IntN(400)) - 100
			switch rng.IntN(5) {
			case 0:
				tb.Reset(key)
				delete(buckets, key)
				continue
			case 1:
				if _, _, err := tb.TakeAt(now, key, lim, cost); err != nil {
					t.Fatal(err)
				}
				buckets[key], _, _ = model.Take(buckets[key], mlim, cost, now)
				continue
			}
			d, err := tb.AdmitAt(now, key, lim, cost)
			if err != nil {
				t.Fatal(err)
			}
			next, ok, left := model.Take(buckets[key], mlim, cost, now)
			want := tokenbucket.Decision{OK: ok, Remaining: left}
			if !ok {
				want.RetryAfterMs = model.RetryAfter(buckets[key], mlim, cost, now)
			}
			if d != want {
				t.Fatalf("session %d op %d: AdmitAt(%d, %q, %+v, %v) = %+v, the model says %+v", session, op, now, key, lim, cost, d, want)
			}
			buckets[key] = next
		}
	}
}

// TestAdmitRefusalWaitIsConsistent: under concurrent admits of one key,
// every refusal's wait is one the bucket could have had: at least 1 ms, and
// no longer than a take of cost from an empty bucket needs.
func TestAdmitRefusalWaitIsConsistent(t *testing.T) {
	tb := tokenbucket.New[string]()
	lim := tokenbucket.Limits{Capacity: 4, RefillPerSecond: 2}
	empty := tokenbucket.RetryAfterOf(0, 100, lim, 1, 100)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				d, err := tb.AdmitAt(int64(100+i/50), "k", lim, 1)
				if err != nil {
					t.Error(err)
					return
				}
				if !d.OK && (d.RetryAfterMs < 1 || d.RetryAfterMs > empty) {
					t.Errorf("goroutine %d: a refusal waits %d ms, outside 1..%d", g, d.RetryAfterMs, empty)
					return
				}
				if d.OK && d.RetryAfterMs != 0 {
					t.Errorf("goroutine %d: an admitted take has a wait %d", g, d.RetryAfterMs)
					return
				}
			}
		}()
	}
	wg.Wait()
}
