package explore_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	tatomic "github.com/tollgate/tollgate/explore/atomic"
)

// tickets is what rewritten code looks like: a compare-and-swap counter on
// the atomic twin.
type tickets struct{ last tatomic.Int64 }

func (t *tickets) next() int64 {
	for {
		old := t.last.Load()
		if t.last.CompareAndSwap(old, old+1) {
			return old + 1
		}
	}
}

// BenchmarkExplore measures the explorer on code written elsewhere: 2
// threads × 2 operations of a compare-and-swap counter, every schedule
// within 3 preemptions checked by porcupine against the model (the
// rewrite's overlay changes nothing of this path: rewritten code calls
// the same twins). It reports schedules per second of wall time and per
// CPU-second.
func BenchmarkExplore(b *testing.B) {
	spec := explore.Spec[*tickets, string, int64, int64]{
		New:     func() *tickets { return new(tickets) },
		Threads: [][]string{{"next", "next"}, {"next", "next"}},
		Call:    func(t *tickets, _ string) int64 { return t.next() },
		Step:    func(last int64, _ time.Time, _ string) (int64, int64) { return last + 1, last + 1 },
		Twins:   true,
	}
	schedules := 0
	cpu0 := cpuTime()
	start := time.Now()
	for b.Loop() {
		r := explore.Explore(spec, explore.Options{Bound: 3}, "")
		if r.Failure != nil || r.Err != nil || !r.Exhaustive {
			b.Fatalf("want an exhaustive pass: %s", r.Summary())
		}
		schedules += r.Schedules
	}
	wall, cpu := time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds()
	b.ReportMetric(float64(schedules)/wall, "schedules/s")
	b.ReportMetric(float64(schedules)/cpu, "schedules/cpu-s")
	b.ReportMetric(float64(schedules)/float64(b.N), "schedules/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
