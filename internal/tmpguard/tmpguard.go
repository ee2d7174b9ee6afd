// Package tmpguard fails a package's tests when they leave anything in the
// temporary directory. A package's TestMain calls Main instead of m.Run:
//
//	func TestMain(m *testing.M) { tmpguard.Main(m) }
//
// Main gives the tests a temporary directory of their own (TMPDIR, which
// os.TempDir and t.TempDir read, points into it while they run), so that
// the files of packages tested at the same time by go test ./... are not
// counted, and after the tests fails the run, naming each entry, when the
// directory is not empty. It then removes the directory either way, so a
// failing run leaves $TMPDIR as it found it too.
package tmpguard

import (
	"fmt"
	"os"
)

// Main runs the tests of m (a *testing.M, or a wrapper of one such as
// internal/mutants/build.Wrap's) in a fresh temporary directory and exits with
// their status, or 1 when they passed but left something in it.
func Main(m interface{ Run() int }) {
	os.Exit(run(m))
}

func run(m interface{ Run() int }) int {
	dir, err := os.MkdirTemp("", "tollgate-tmpguard-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tmpguard:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	code := m.Run()
	if had {
		os.Setenv("TMPDIR", old)
	} else {
		os.Unsetenv("TMPDIR")
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tmpguard:", err)
		return 1
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left %d entries in the temporary directory (a test must leave $TMPDIR as it found it; use t.TempDir):\n", len(left))
		for _, e := range left {
			fmt.Fprintf(os.Stderr, "\t%s\n", e.Name())
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}
