package lazyfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Halt stops the process pid (SIGSTOP) and waits, up to d, until every
// one of its threads has stopped. A caller halts a server before
// PowerLoss, so that the power loss is one instant: every reply the server
// sent went out before it, and nothing it does after can be acknowledged
// (a thread inside a call to the mount finishes that call first, before
// the power loss, which waits for it). Then the process is killed.
func Halt(pid int, d time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("lazyfs: SIGSTOP to pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(d)
	for {
		running, err := runningThreads(pid)
		if err != nil || running == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lazyfs: %d threads of pid %d still running %v after SIGSTOP", running, pid, d)
		}
		time.Sleep(time.Millisecond)
	}
}

// runningThreads counts the threads of pid that are neither stopped nor
// dead, from /proc.
func runningThreads(pid int) (int, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread has exited
		}
		// pid (comm) state …: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			return 0, fmt.Errorf("lazyfs: cannot read %s: %q", t, s)
		}
		switch s[i+2] {
		case 'T', 't', 'Z', 'X', 'x':
		default:
			n++
		}
	}
	return n, nil
}
