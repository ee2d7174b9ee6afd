package bench

import (
	"fmt"
	"testing"
)

// BenchmarkSuite runs the quick suite through the testing package:
//
//	go test -run '^$' -bench Suite ./bench
//
// Filter with -bench 'Suite/TB/work=admit/keys=1/'.
func BenchmarkSuite(b *testing.B) {
	for _, c := range Suite(false) {
		b.Run(c.Name, underTest(c.Run))
	}
}

// BenchmarkFull runs the complete matrix.
func BenchmarkFull(b *testing.B) {
	for _, c := range Suite(true) {
		b.Run(c.Name, underTest(c.Run))
	}
}

// BenchmarkMemoryPerKey reports the live heap per idle bucket key at
// 1,000,000 keys for each design, as bytes/key.
func BenchmarkMemoryPerKey(b *testing.B) {
	for _, d := range MemoryDesigns() {
		b.Run("design="+d.Name, func(b *testing.B) {
			for range b.N {
				b.ReportMetric(MemoryPerKey(d, 1_000_000), "bytes/key")
			}
		})
	}
}

// BenchmarkHarnessOverhead measures the driver itself: an operation that
// does nothing, on 1 and 8 goroutines. Its ns/op is the floor under every
// number the suite reports.
func BenchmarkHarnessOverhead(b *testing.B) {
	for _, g := range []int{1, 8} {
		b.Run(fmt.Sprintf("g=%d", g), underTest(func(b B) {
			parallel(b, g, func(int) opFunc { return func(int) bool { return true } })
		}))
	}
}

// testB is a *testing.B as the cases' B.
type testB struct{ *testing.B }

func (b testB) N() int { return b.B.N }

// underTest runs a case under go test's benchmark driver, which reports
// its allocations as tollgate bench does.
func underTest(run func(B)) func(*testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		run(testB{b})
	}
}
