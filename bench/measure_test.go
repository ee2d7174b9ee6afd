package bench

import (
	"slices"
	"testing"
	"time"
)

// TestPredictN: the testing package's prediction, its bounds included.
func TestPredictN(t *testing.T) {
	for _, c := range []struct {
		goalns, prevIters, prevns, last int64
		want                            int
	}{
		{1e9, 1, 1000, 1, 100},         // 1e6 predicted, at most 100 times the last
		{1e9, 1000, 1e8, 1000, 12_000}, // 1e4 predicted, and a fifth more
		{1e9, 100, 1e9, 100, 120},      // on target: a fifth more
		{1e9, 100, 1e10, 100, 101},     // too slow: one more than the last
		{1e9, 1, 0, 1, 100},            // faster than the clock
		{1e9, 5e8, 1, 5e8, 1_000_000_000},
	} {
		if got := predictN(c.goalns, c.prevIters, c.prevns, c.last); got != c.want {
			t.Errorf("predictN(%d, %d, %d, %d) = %d, want %d", c.goalns, c.prevIters, c.prevns, c.last, got, c.want)
		}
	}
}

// TestMeasureGrowsN: measure starts at one operation and grows N, each run
// longer than the last by at most 100 times, until a run takes the
// benchmark time; it returns the last run. With no benchmark time, one run
// of one operation.
func TestMeasureGrowsN(t *testing.T) {
	var ns []int
	run := func(b B) {
		ns = append(ns, b.N())
		for range b.N() {
			time.Sleep(0)
		}
	}
	// 50 ms, so that a first run of one operation never takes the whole
	// time on a loaded machine (at 2 ms, CI's -race run saw one take 2.1 ms).
	m := measure(run, 50*time.Millisecond)
	if len(ns) < 2 || ns[0] != 1 || m.N != ns[len(ns)-1] || m.T < 50*time.Millisecond {
		t.Fatalf("runs of %v operations, result %+v", ns, m)
	}
	for i := 1; i < len(ns); i++ {
		if ns[i] <= ns[i-1] || ns[i] > 100*ns[i-1] {
			t.Errorf("run %d of %d operations after %d", i, ns[i], ns[i-1])
		}
	}
	ns = nil
	if m := measure(run, 0); !slices.Equal(ns, []int{1}) || m.N != 1 {
		t.Errorf("no benchmark time: runs %v, N %d; want one of 1", ns, m.N)
	}
}

// sink keeps the allocations of TestMeasureCounts on the heap.
var sink []byte

// TestMeasureCounts: what happens before ResetTimer or after StopTimer is
// not measured (allocations, metrics); metrics reported in between are;
// Fatal ends the case and the result is a failure with its message.
func TestMeasureCounts(t *testing.T) {
	m := measure(func(b B) {
		b.ReportMetric(1, "before-reset")
		for range 1000 {
			sink = make([]byte, 4096)
		}
		b.ResetTimer()
		for range b.N() {
			sink = make([]byte, 1024)
		}
		b.StopTimer()
		for range 1000 {
			sink = make([]byte, 4096)
		}
		b.ReportMetric(7, "p99-ns")
	}, time.Millisecond)
	if m.N == 0 || m.allocsPerOp() != 1 || m.bytesPerOp() < 1024 || m.bytesPerOp() >= 2048 {
		t.Errorf("N %d, %d allocs/op, %d B/op; want 1 allocation of 1024 bytes per op", m.N, m.allocsPerOp(), m.bytesPerOp())
	}
	if len(m.Extra) != 1 || m.Extra["p99-ns"] != 7 {
		t.Errorf("metrics %v, want only p99-ns 7", m.Extra)
	}
	// Stopped, then reset: nothing of the run is left.
	m = measure(func(b B) {
		for range 1000 {
			sink = make([]byte, 4096)
		}
		b.StopTimer()
		b.ResetTimer()
	}, 0)
	if m.N != 1 || m.T != 0 || m.MemAllocs != 0 || m.MemBytes != 0 {
		t.Errorf("a run stopped and reset measured %+v, want nothing", m)
	}
	after := false
	m = measure(func(b B) {
		defer func() { after = true }()
		b.Fatal("broke at ", b.N())
	}, time.Second)
	if m.N != 0 || m.Failure != "broke at 1" || !after {
		t.Errorf("failed case: %+v (deferred calls ran: %v), want no N and the message", m, after)
	}
}
