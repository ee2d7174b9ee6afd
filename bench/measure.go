package bench

import (
	"fmt"
	"math"
	"runtime"
	"time"
)

// B is the benchmark driver a case runs under: this package's own
// (measure), which tollgate bench uses, or the testing package's *testing.B
// under go test -bench. A case runs N operations; the driver times them
// from the case's ResetTimer to its StopTimer, with the allocations made
// in between, and chooses N so that the run takes about the benchmark
// time.
type B interface {
	// N is the number of operations to run.
	N() int
	// ResetTimer zeroes the time and the allocations measured so far and
	// forgets the metrics reported; the timer keeps running.
	ResetTimer()
	// StopTimer stops timing.
	StopTimer()
	// ReportMetric reports n in unit, e.g. "p99-ns", for the run.
	ReportMetric(n float64, unit string)
	// Fatal fails the run with a message and ends the case's goroutine.
	Fatal(args ...any)
}

// measurement is one case measured by measure: the last run's operations,
// time, allocations and metrics, as testing.BenchmarkResult has them. N is
// 0 when the case failed.
type measurement struct {
	N         int
	T         time.Duration
	MemAllocs uint64
	MemBytes  uint64
	Extra     map[string]float64
	Failure   string // the message of Fatal
}

// nsPerOp is wall time per operation (NaN for a failed case).
func (m measurement) nsPerOp() float64 {
	if m.N == 0 {
		return math.NaN()
	}
	return float64(m.T.Nanoseconds()) / float64(m.N)
}

func (m measurement) allocsPerOp() int64 {
	if m.N == 0 {
		return 0
	}
	return int64(m.MemAllocs) / int64(m.N)
}

func (m measurement) bytesPerOp() int64 {
	if m.N == 0 {
		return 0
	}
	return int64(m.MemBytes) / int64(m.N)
}

// driver is measure's B.
type driver struct {
	n          int
	timerOn    bool
	start      time.Time
	duration   time.Duration
	startAlloc uint64 // mallocs when the timer started
	startBytes uint64
	netAllocs  uint64
	netBytes   uint64
	extra      map[string]float64
	failed     bool
	failure    string
}

func (d *driver) N() int { return d.n }

func (d *driver) startTimer() {
	if !d.timerOn {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		d.startAlloc, d.startBytes = ms.Mallocs, ms.TotalAlloc
		d.start = time.Now()
		d.timerOn = true
	}
}

func (d *driver) StopTimer() {
	if d.timerOn {
		d.duration += time.Since(d.start)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		d.netAllocs += ms.Mallocs - d.startAlloc
		d.netBytes += ms.TotalAlloc - d.startBytes
		d.timerOn = false
	}
}

func (d *driver) ResetTimer() {
	if d.extra == nil {
		// Allocated before the memory statistics are read, so that it is
		// not counted.
		d.extra = make(map[string]float64, 16)
	} else {
		clear(d.extra)
	}
	if d.timerOn {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		d.startAlloc, d.startBytes = ms.Mallocs, ms.TotalAlloc
		d.start = time.Now()
	}
	d.duration, d.netAllocs, d.netBytes = 0, 0, 0
}

func (d *driver) ReportMetric(n float64, unit string) { d.extra[unit] = n }

func (d *driver) Fatal(args ...any) {
	d.failed, d.failure = true, fmt.Sprint(args...)
	runtime.Goexit()
}

// runN runs the case once with n operations, on a goroutine of its own
// (Fatal ends it), after a collection that clears the garbage of the
// runs before.
func (d *driver) runN(run func(B), n int) {
	runtime.GC()
	d.n = n
	d.ResetTimer()
	d.startTimer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(d)
	}()
	<-done
	d.StopTimer()
}

// measure runs a case as testing.Benchmark does at -benchtime benchtime:
// once with one operation, then with more until a run takes benchtime,
// each N predicted from the run before; it returns the last run.
func measure(run func(B), benchtime time.Duration) measurement {
	d := &driver{}
	d.runN(run, 1)
	for n := 1; !d.failed && d.duration < benchtime && n < maxIters; {
		last := n
		n = predictN(benchtime.Nanoseconds(), int64(d.n), d.duration.Nanoseconds(), int64(last))
		d.runN(run, n)
	}
	if d.failed {
		return measurement{Failure: d.failure}
	}
	return measurement{N: d.n, T: d.duration, MemAllocs: d.netAllocs, MemBytes: d.netBytes, Extra: d.extra}
}

// maxIters bounds a run's operations, as the testing package does.
const maxIters = 1_000_000_000

// predictN is the testing package's prediction of the operations a run
// needs to take goalns, from the last run's prevIters operations in prevns:
// 1.2 times the estimate, at most 100 times last and at least last+1.
func predictN(goalns, prevIters, prevns, last int64) int {
	prevns = max(prevns, 1) // a run faster than the clock
	// Multiply first: for fast operations prevIters ≈ prevns.
	n := goalns * prevIters / prevns
	n += n / 5
	n = min(n, 100*last)
	n = max(n, last+1)
	n = min(n, maxIters)
	return int(n)
}
