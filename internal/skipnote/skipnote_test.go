package skipnote

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissingOncePerProgram: one line per program, naming the package, the
// program and the reason with its install command.
func TestMissingOncePerProgram(t *testing.T) {
	var buf bytes.Buffer
	old := output
	output = func() (io.Writer, func()) { return &buf, func() {} }
	t.Cleanup(func() {
		output = old
		mu.Lock()
		delete(said, "prog-a")
		delete(said, "prog-b")
		mu.Unlock()
	})
	Missing("prog-a", errors.New("prog-a is not on PATH (install it: apt-get install prog-a)"))
	Missing("prog-a", errors.New("again"))
	Missing("prog-b", errors.New("no prog-b"))
	want := "skipnote: skipping the tests that need prog-a: prog-a is not on PATH (install it: apt-get install prog-a) (CI=true makes this a failure; -v lists the tests)\n" +
		"skipnote: skipping the tests that need prog-b: no prog-b (CI=true makes this a failure; -v lists the tests)\n"
	if buf.String() != want {
		t.Errorf("Missing wrote\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestPlainGoTestShowsIt runs `go test` on a package whose test skips for
// a missing program, without -v, as `go test ./...` would: its output
// shows the line (without skipnote it would show only "ok").
func TestPlainGoTestShowsIt(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd/2"); err != nil {
		t.Skip("no /proc: the line shows only with -v here")
	}
	cmd := exec.Command("go", "test", "-count=1", "./testdata/needsprog")
	var out bytes.Buffer // a pipe, as a terminal or a CI log would be
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out.String())
	}
	line := "needsprog: skipping the tests that need no-such-program: no-such-program is not on PATH (install it: apt-get install no-such-program)"
	if n := strings.Count(out.String(), line); n != 1 {
		t.Errorf("go test's output has the line %d times, want once:\n%s", n, out.String())
	}
}
