// Package skipnote makes a test that skips for a missing program visible
// in the plain output of `go test ./...`.
//
// go test shows a passing package's output, its skips included, only with
// -v: without it a package whose Redis, etcd or FUSE tests all skipped
// prints the same "ok" line as one that ran them. Missing, called where a
// test skips for want of a program, writes one line naming the package,
// the program and how to install it, once per test binary and program,
// to the go command's own standard error (through /proc/<parent>/fd/2 on
// Linux), which go test does not buffer. With -v, where go test shows
// everything, or where the parent's standard error is a regular file
// (appending to it would race the go command's own writes) or cannot be
// opened (no /proc), the line goes to the test's standard error instead,
// and shows with -v. Under CI=true the callers fail instead of skipping,
// as before.
package skipnote

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	mu   sync.Mutex
	said = map[string]bool{}
	// output opens where Missing writes; the tests replace it.
	output = parentStderr
)

// Missing notes that the calling package's tests that need program are
// skipped because of why (which should say how to install it): one line,
// the first time this test binary skips for program.
func Missing(program string, why error) {
	mu.Lock()
	defer mu.Unlock()
	if said[program] {
		return
	}
	said[program] = true
	w, done := output()
	defer done()
	fmt.Fprintf(w, "%s: skipping the tests that need %s: %v (CI=true makes this a failure; -v lists the tests)\n", pkg(), program, why)
}

// pkg is the name of the package under test, from its test binary's name
// (go test builds <package>.test).
func pkg() string {
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
}

// parentStderr opens the go command's standard error for appending, or
// returns the test's own where that is not possible or not wanted (see
// the package doc); done closes what was opened.
func parentStderr() (w io.Writer, done func()) {
	own := func() (io.Writer, func()) { return os.Stderr, func() {} }
	if testing.Verbose() {
		return own()
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", os.Getppid()), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return own()
	}
	if st, err := f.Stat(); err != nil || st.Mode().IsRegular() {
		f.Close()
		return own()
	}
	return f, func() { f.Close() }
}
