package tokenbucket_test

import (
	"strconv"
	"testing"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// The take path per kind of key, on a table of 1024 keys already seen: a
// string and an integer (hashed without maphash.Comparable's dispatch), a
// float (checked for NaN before it is hashed), a struct of a string and an
// int (maphash.Comparable), and an any holding a string (which is checked
// for a value that cannot be hashed).

const benchKeys = 1024

var benchLim = tokenbucket.Limits{Capacity: 1e18, RefillPerSecond: 1}

func benchTake[K comparable](b *testing.B, key func(i int) K) {
	tab := tokenbucket.New[K]()
	keys := make([]K, benchKeys)
	for i := range keys {
		keys[i] = key(i)
		tab.TakeAt(0, keys[i], benchLim, 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tab.TakeAt(1, keys[i%benchKeys], benchLim, 1)
	}
}

type structKey struct {
	Tenant string
	ID     int
}

func BenchmarkTakeString(b *testing.B) {
	benchTake(b, func(i int) string { return "user-" + strconv.Itoa(i) })
}

func BenchmarkTakeInt(b *testing.B) { benchTake(b, func(i int) int { return i * 7919 }) }

func BenchmarkTakeFloat(b *testing.B) { benchTake(b, func(i int) float64 { return float64(i) / 3 }) }

func BenchmarkTakeStruct(b *testing.B) {
	benchTake(b, func(i int) structKey { return structKey{"t", i} })
}

func BenchmarkTakeAny(b *testing.B) {
	benchTake(b, func(i int) any { return "user-" + strconv.Itoa(i) })
}

// BenchmarkReclaimWalk: one ReclaimAt over a table of 100,000 keys none of
// which is full, so the walk loads every bucket word and kills none: the
// cost of a ReclaimEvery round that finds nothing to forget, reported per
// key held.
func BenchmarkReclaimWalk(b *testing.B) {
	const keys = 100_000
	tab := tokenbucket.New[int]()
	lim := tokenbucket.Limits{Capacity: 10, RefillPerSecond: 1e-6}
	for i := range keys {
		tab.TakeAt(0, i, lim, 1)
	}
	b.ResetTimer()
	for b.Loop() {
		tab.ReclaimAt(1, lim)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
}
