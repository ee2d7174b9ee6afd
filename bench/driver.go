package bench

import (
	"math"
	"slices"
	"sync"
	"syscall"
	"time"
)

// sampleEvery is how often an operation's latency is sampled: 1 in 64.
const sampleEvery = 64

// worker is one goroutine of a parallel run.
type worker struct {
	id       int
	ops      int // operations this worker runs
	admitted int
	samples  []int64 // sampled latencies, ns
}

// opFunc runs operation i of worker w and reports whether it was admitted.
type opFunc func(i int) bool

// parallel runs b.N() operations split evenly over g goroutines, each built by
// newOp for its worker index, and reports the latency, admission and
// fairness metrics. Setup inside newOp is not timed.
func parallel(b B, g int, newOp func(w int) opFunc) runStats {
	var cpu0, sleeps0 int64
	var wait0 float64
	var parks parkCounter
	ws := runWorkers(g, b.N(), newOp, func() {
		parks.start()
		wait0 = lockWaitNs() // allocates: read before the timer, not counted
		b.ResetTimer()
		cpu0, sleeps0 = processCPU()
	})
	cpu, sleeps := processCPU()
	cpu, sleeps = cpu-cpu0, sleeps-sleeps0
	b.StopTimer()
	wait := lockWaitNs() - wait0
	st := summarize(ws)
	n := float64(b.N())
	st.cpuPerOp = float64(cpu) / n
	st.report(b)
	b.ReportMetric(wait/n, "lockwait-ns/op")
	b.ReportMetric(float64(sleeps)/n*1e6, "sleeps/Mop")
	b.ReportMetric(clockNs(), "clock-ns")
	parks.report(b)
	return st
}

// clockNs is the median latency runWorkers samples for an operation that
// does nothing — the cost of the two clock reads around an operation, and
// the resolution below which p50-ns and p99-ns measure the clock, not the
// operation. Measured after the run, when nothing else of it runs.
func clockNs() float64 {
	const samples = 1024
	var op opFunc = func(int) bool { return true }
	xs := make([]int64, samples)
	for i := range xs {
		t0 := time.Now()
		op(i)
		xs[i] = int64(time.Since(t0))
	}
	slices.Sort(xs)
	return percentile(xs, 0.50)
}

// runWorkers runs n operations split evenly over g goroutines and returns
// what each did. It calls started once every goroutine is ready, just
// before they start together.
func runWorkers(g, n int, newOp func(w int) opFunc, started func()) []*worker {
	ws := make([]*worker, g)
	ops := make([]opFunc, g)
	for w := range ws {
		k := n / g
		if w < n%g {
			k++
		}
		ws[w] = &worker{id: w, ops: k, samples: make([]int64, 0, k/sampleEvery+1)}
		ops[w] = newOp(w)
	}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(g)
	done.Add(g)
	for w := range ws {
		go func(wk *worker, op opFunc) {
			defer done.Done()
			ready.Done()
			<-start
			admitted := 0
			for i := 0; i < wk.ops; i++ {
				if i%sampleEvery == 0 {
					t0 := time.Now()
					ok := op(i)
					wk.samples = append(wk.samples, int64(time.Since(t0)))
					if ok {
						admitted++
					}
					continue
				}
				if op(i) {
					admitted++
				}
			}
			wk.admitted = admitted
		}(ws[w], ops[w])
	}
	ready.Wait()
	if started != nil {
		started()
	}
	close(start)
	done.Wait()
	return ws
}

// runStats is what one parallel run measured besides time.
type runStats struct {
	admitted   int     // admissions over all goroutines
	cpuPerOp   float64 // process CPU time (user+system, every thread) per op, ns
	p50, p99   float64
	admitFrac  float64
	fairSpread float64 // NaN with one goroutine
}

func summarize(ws []*worker) runStats {
	var all []int64
	total, adm := 0, 0
	lo, hi := math.MaxInt, 0
	for _, w := range ws {
		all = append(all, w.samples...)
		total += w.ops
		adm += w.admitted
		lo, hi = min(lo, w.admitted), max(hi, w.admitted)
	}
	slices.Sort(all)
	st := runStats{admitted: adm, p50: percentile(all, 0.50), p99: percentile(all, 0.99), fairSpread: math.NaN()}
	if total > 0 {
		st.admitFrac = float64(adm) / float64(total)
	}
	if len(ws) > 1 && adm > 0 && adm < total { // only a partly admitting run can be unfair
		mean := float64(adm) / float64(len(ws))
		st.fairSpread = float64(hi-lo) / mean
	}
	return st
}

// percentile is the nearest-rank q-quantile of sorted xs (0 when empty).
func percentile(xs []int64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return float64(xs[max(i, 0)])
}

func (st runStats) report(b B) {
	b.ReportMetric(st.cpuPerOp, "cpu-ns/op")
	b.ReportMetric(st.p50, "p50-ns")
	b.ReportMetric(st.p99, "p99-ns")
	b.ReportMetric(st.admitFrac, "admit/op")
	if !math.IsNaN(st.fairSpread) {
		b.ReportMetric(st.fairSpread, "fair-spread")
	}
}

// processCPU is the CPU time this process has used, user and system, in
// nanoseconds, and how many times one of its threads has gone to sleep in
// the kernel (voluntary context switches: a thread with no goroutine to
// run, waiting on a futex, or blocked in a system call).
func processCPU() (cpuNs, sleeps int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), ru.Nvcsw
}
