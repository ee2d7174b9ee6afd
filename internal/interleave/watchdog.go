package interleave

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The watchdog: a thread that blocks where the explorer does not control
// it never reaches its next switch point, so the step that resumed it
// never returns and the exploration would hang without a word (a receive
// from a channel in a test file, which the rewrite does not reach; a lock
// or I/O outside the explored code). One goroutine samples every live
// controller once a second; a step that has made no progress for
// StuckAfter of real time ends the process with what is known: the
// thread, the step, the operation, and every goroutine's stack (the stuck
// thread's names the line it waits at). The explorer cannot take the
// thread back (it is blocked inside a coroutine the controller is
// resuming), so it cannot go on with another schedule.
//
// $TOLLGATE_EXPLORE_STUCK sets StuckAfter (a Go duration; default 30s).

// stepWatch is a controller's part of the watchdog: written by the
// controller at every step, read by the watchdog. One atomic word holds
// what the watchdog reads, so that a step pays one store to begin and one
// to end: the steps begun (its high 32 bits, wrapping), and the thread of
// the step in progress and its operation, each plus one (0: between
// steps; no operation).
type stepWatch struct {
	word atomic.Uint64
	seq  uint32 // steps begun; the controller's alone
}

func (s *stepWatch) begin(thread, op int) {
	s.seq++
	s.word.Store(uint64(s.seq)<<32 | uint64(uint16(thread+1))<<16 | uint64(uint16(op+1)))
}

func (s *stepWatch) end() { s.word.Store(uint64(s.seq) << 32) }

// read is what the watchdog sees: the steps begun, and the thread and
// operation of the step in progress (thread -1 between steps).
func (s *stepWatch) read() (seq uint32, thread, op int) {
	w := s.word.Load()
	return uint32(w >> 32), int(uint16(w>>16)) - 1, int(uint16(w)) - 1
}

var watchdog struct {
	once  sync.Once
	mu    sync.Mutex
	live  map[*stepWatch]string // the scenario each controller explores
	after time.Duration
}

// StuckAfter is how long a step may run, in real time, before the
// watchdog ends the process.
func StuckAfter() time.Duration {
	watchdog.once.Do(startWatchdog)
	return watchdog.after
}

func startWatchdog() {
	watchdog.live = map[*stepWatch]string{}
	watchdog.after = 30 * time.Second
	if v := os.Getenv("TOLLGATE_EXPLORE_STUCK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			panic(fmt.Sprintf("interleave: $TOLLGATE_EXPLORE_STUCK=%q: must be a positive Go duration such as 30s", v))
		}
		watchdog.after = d
	}
	tick := min(time.Second, watchdog.after/4)
	go func() {
		type sample struct {
			seq   uint32
			since time.Time
		}
		last := map[*stepWatch]sample{}
		for now := range time.Tick(tick) {
			watchdog.mu.Lock()
			for s, name := range watchdog.live {
				seq, t, op := s.read()
				p, ok := last[s]
				if !ok || p.seq != seq || t < 0 {
					last[s] = sample{seq, now}
					continue
				}
				if now.Sub(p.since) >= watchdog.after {
					stuck(name, t, op, seq, now.Sub(p.since))
				}
			}
			for s := range last {
				if _, ok := watchdog.live[s]; !ok {
					delete(last, s)
				}
			}
			watchdog.mu.Unlock()
		}
	}()
}

// watch registers a controller's steps with the watchdog until the
// returned function is called.
func watch(s *stepWatch, scenario string) (unwatch func()) {
	StuckAfter()
	s.end()
	watchdog.mu.Lock()
	watchdog.live[s] = scenario
	watchdog.mu.Unlock()
	return func() {
		watchdog.mu.Lock()
		delete(watchdog.live, s)
		watchdog.mu.Unlock()
	}
}

// named tells the watchdog which scenario c explores.
func (c *controller) named(scenario string) {
	watchdog.mu.Lock()
	if _, ok := watchdog.live[&c.watch]; ok {
		watchdog.live[&c.watch] = scenario
	}
	watchdog.mu.Unlock()
}

// stuck reports a stuck step on stderr, with every goroutine's stack,
// and exits with status 2.
func stuck(scenario string, thread, op int, seq uint32, d time.Duration) {
	opText := ""
	if op >= 0 {
		opText = fmt.Sprintf(", in its operation %d", op)
	}
	fmt.Fprintf(os.Stderr, "\nexplore: no verdict for scenario %s: thread T%d has run %v of real time since its last switch point (step %d of the exploration%s).\n"+
		"It is blocked where the explorer does not control it, or loops without a switch point: a channel operation,\n"+
		"select or lock in a file the rewrite does not reach (a test file receives with explore/rt's Recv, sends with\n"+
		"Send, makes contexts with its WithCancel), a real timer, a system call or I/O. The explorer cannot take the\n"+
		"thread back, so the process ends here. Every goroutine's stack follows; the stuck thread's shows where it waits.\n"+
		"($TOLLGATE_EXPLORE_STUCK sets this limit, now %v.)\n\n", scenario, thread, d.Round(time.Second), seq, opText, watchdog.after)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	os.Stderr.Write(buf)
	os.Exit(2)
}
