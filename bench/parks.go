package bench

import (
	"runtime"
	"runtime/metrics"
	"strings"
)

// Goroutines parked on a lock. A lock-based design at two goroutines on two
// cores can be faster in wall time than one that never blocks, because
// while one goroutine holds the lock the other parks instead of pulling the
// shared line back and forth. Two counts show whether that happens:
//
//	lockwait-ns/op  time goroutines spent blocked on a sync.Mutex,
//	                sync.RWMutex or runtime-internal lock, per operation
//	                (runtime/metrics /sync/mutex/wait/total:seconds, which
//	                the runtime samples; read in every build)
//	lockparks/op    times a goroutine blocked in sync.Mutex.Lock, per
//	                operation, from the block profile at rate 1; only in
//	                builds with -tags tollgate_stats, because recording
//	                every blocking event slows the lock it counts

// lockWaitMetric is the runtime's cumulative lock-wait time.
const lockWaitMetric = "/sync/mutex/wait/total:seconds"

// lockWaitNs is the process's cumulative time blocked on locks, ns.
func lockWaitNs() float64 {
	s := []metrics.Sample{{Name: lockWaitMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return s[0].Value.Float64() * 1e9
}

// lockParks is how many times a goroutine has blocked in sync.Mutex.Lock
// since the block profile's rate was last set to 1 (see countParks).
func lockParks() int64 {
	n, _ := runtime.BlockProfile(nil)
	recs := make([]runtime.BlockProfileRecord, n+64)
	n, ok := runtime.BlockProfile(recs)
	if !ok {
		return 0
	}
	var parks int64
	for _, r := range recs[:n] {
		if blockedInMutexLock(r.Stack()) {
			parks += r.Count
		}
	}
	return parks
}

// blockedInMutexLock reports whether a blocking event's stack passes
// through sync.Mutex's Lock (or RWMutex's, which waits on the same
// semaphore path).
func blockedInMutexLock(stack []uintptr) bool {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "sync.(*Mutex).") || strings.HasPrefix(f.Function, "sync.(*RWMutex).") {
			return true
		}
		if !more {
			return false
		}
	}
}

// parkCounter counts one run's parks when the build counts them
// (countsRetries, -tags tollgate_stats); otherwise it does nothing.
type parkCounter struct{ before int64 }

// start turns the block profile on and notes the count so far.
func (p *parkCounter) start() {
	if !countsRetries {
		return
	}
	runtime.SetBlockProfileRate(1)
	p.before = lockParks()
}

// report turns the block profile off and reports lockparks/op.
func (p *parkCounter) report(b B) {
	if !countsRetries {
		return
	}
	runtime.SetBlockProfileRate(0)
	b.ReportMetric(float64(lockParks()-p.before)/float64(b.N()), "lockparks/op")
}
