package interleave

import (
	"iter"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate/tollgate/model"
)

// benchScenario is a 2-thread × 2-operation credit scenario: each thread
// reserves an internal slot and releases it.
func benchScenario() Scenario {
	return CreditsScenario("bench-2x2", "benchmark", nil,
		[]CrStep{Reserve(1, model.Internal), Release(1, Mine(0))},
		[]CrStep{Reserve(2, model.Internal), Release(2, Mine(0))})
}

// BenchmarkExplore measures schedules per second of the exhaustive search,
// each one a run from a fresh table, its history checked (porcupine, or
// the verdict cache for a history seen before). Besides wall-clock
// schedules/s it reports schedules per second of this process's CPU time
// (user + system), which does not depend on what else the shared machine
// runs: on a loaded 2-core machine the process may get a quarter of a core.
func BenchmarkExplore(b *testing.B) {
	s := benchScenario()
	total, runs := 0, 0
	cpu0 := cpuTime(b)
	start := time.Now()
	for total < b.N {
		r := Explore(s, Options{Bound: 3, Budget: Budget{Schedules: b.N - total}})
		if r.Err != nil || r.Failure != nil {
			b.Fatal(r.Summary())
		}
		for _, n := range r.PerBound {
			total += n
		}
		runs++
	}
	el := time.Since(start)
	cpu := cpuTime(b) - cpu0
	b.ReportMetric(float64(total)/el.Seconds(), "schedules/s")
	b.ReportMetric(float64(total)/cpu.Seconds(), "schedules/cpu-s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(total), "ns/schedule")
}

// cpuTime is the CPU time this process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSwitch compares the two ways of handing control between the
// controller and a logical thread: a coroutine switch (iter.Pull, what the
// controller uses) and a handoff over two unbuffered channels.
func BenchmarkSwitch(b *testing.B) {
	b.Run("coroutine", func(b *testing.B) {
		next, stop := iter.Pull(func(yield func(int) bool) {
			for i := 0; yield(i); i++ {
			}
		})
		defer stop()
		for b.Loop() {
			next()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/switch")
	})
	b.Run("channels", func(b *testing.B) {
		in, out := make(chan struct{}), make(chan struct{})
		go func() {
			for range in {
				out <- struct{}{}
			}
		}()
		for b.Loop() {
			in <- struct{}{}
			<-out
		}
		close(in)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/switch")
	})
}
