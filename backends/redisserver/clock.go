package redisserver

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Clock faults: the server's wall clock stepped forward or back while it
// runs, as NTP or an operator steps a machine's clock. redis-server reads
// the wall clock through libc (gettimeofday, clock_gettime), so a library
// preloaded into it (clockshim/clockshim.c, built with the C compiler when
// the server starts) can add an offset to every realtime reading; the
// monotonic clocks are left alone. The offset lives in a file the shim maps
// shared: StepClock changes it at once, without a restart.
//
// libfaketime (FAKETIME_TIMESTAMP_FILE with FAKETIME_NO_CACHE) is the
// usual tool; its 0.9.10 recurses in its own start-up under redis-server's
// jemalloc and the server never starts, hence the shim.

//go:embed clockshim/clockshim.c
var clockShimSource []byte

// ErrNoCompiler is wrapped by Start's error when WithSteppableClock needs
// a C compiler to build its shim and none is installed.
var ErrNoCompiler = errors.New("redisserver: WithSteppableClock builds an LD_PRELOAD shim and needs a C compiler (cc or gcc; apt-get install -y gcc)")

// WithSteppableClock starts the server with its wall clock under the
// test's control (StepClock). A replica started from it does not share it.
func WithSteppableClock() Option { return func(c *config) { c.clock = true } }

// clock is a server's steppable clock: the shim and the offset file it
// maps, both in the server's directory.
type clock struct {
	shim, file string
	offset     *int64 // the file's first 8 bytes, mapped shared
	mapped     []byte
}

// setUpClock builds the shim into dir and makes the offset file (offset
// 0).
func setUpClock(dir string) (*clock, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			return nil, ErrNoCompiler
		}
	}
	src := filepath.Join(dir, "clockshim.c")
	if err := os.WriteFile(src, clockShimSource, 0o644); err != nil {
		return nil, fmt.Errorf("redisserver: %w", err)
	}
	c := &clock{shim: filepath.Join(dir, "clockshim.so"), file: filepath.Join(dir, "clock-offset")}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", c.shim, src).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redisserver: building the clock shim: %v: %s", err, out)
	}
	f, err := os.OpenFile(c.file, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("redisserver: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(8); err != nil {
		return nil, fmt.Errorf("redisserver: %w", err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("redisserver: mapping the clock offset: %w", err)
	}
	c.mapped, c.offset = m, (*int64)(unsafe.Pointer(&m[0]))
	return c, nil
}

func (c *clock) env() []string {
	return append(os.Environ(), "LD_PRELOAD="+c.shim, "TOLLGATE_CLOCK_FILE="+c.file)
}

func (c *clock) close() {
	if c.mapped != nil {
		_ = syscall.Munmap(c.mapped)
		c.mapped, c.offset = nil, nil
	}
}

// StepClock sets the server's wall clock to run d ahead of the machine's
// (behind it when d < 0; 0 puts it right): from the next reading on, as a
// step, not a slew. It fails on a server not started WithSteppableClock.
func (s *Server) StepClock(d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clock == nil || s.clock.offset == nil {
		return errors.New("redisserver: StepClock: the server was not started WithSteppableClock")
	}
	atomic.StoreInt64(s.clock.offset, d.Microseconds())
	return nil
}

// Time is the server's clock, as its TIME command answers.
func (s *Server) Time() (time.Time, error) {
	r, err := s.QueryList("TIME")
	if err != nil {
		return time.Time{}, err
	}
	if len(r) != 2 {
		return time.Time{}, fmt.Errorf("redisserver: TIME answered %q", r)
	}
	sec, err1 := strconv.ParseInt(r[0], 10, 64)
	us, err2 := strconv.ParseInt(r[1], 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("redisserver: TIME answered %q", r)
	}
	return time.Unix(sec, us*1000), nil
}

// ClockSkew is how far the server's clock (TIME) runs ahead of the
// machine's, to within the round trip: the machine's clock read before and
// after it, the middle taken.
func (s *Server) ClockSkew() (time.Duration, error) {
	before := time.Now()
	t, err := s.Time()
	if err != nil {
		return 0, err
	}
	after := time.Now()
	return t.Sub(before.Add(after.Sub(before) / 2)), nil
}
