package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestHelperDriver is not a test: run with TOLLGATE_HELPER_DRIVER set, the
// test binary becomes `tollgate driver` with the arguments in that variable,
// so TestConformCommand can check the two commands end to end.
func TestHelperDriver(t *testing.T) {
	args, ok := os.LookupEnv("TOLLGATE_HELPER_DRIVER")
	if !ok {
		t.Skip("helper process for TestConformCommand")
	}
	os.Exit(runDriver(strings.Fields(args)))
}

// helperDriver is the command line of this test binary as `tollgate driver
// args` (TestHelperDriver), the arguments passed through env(1) rather
// than this process's environment.
func helperDriver(args string) []string {
	return []string{"env", "TOLLGATE_HELPER_DRIVER=" + args, os.Args[0], "-test.run=^TestHelperDriver$"}
}

// TestConformCommand: conform passes the real driver and fails two
// mutants, each one run of the two commands end to end, and a mutant's
// failure is the mutant's: an answer that breaks an invariant, not a
// driver that crashed or printed garbage (the helper driver is this test
// binary, which serves a mutant only when the mutants are compiled in:
// Need).
func TestConformCommand(t *testing.T) {
	build.Need(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		driverArgs string
		prims      string
		want       int
	}{
		{"", "", 0},
		{"--mutant tb-timestamp-regress", "", 1},
		{"--mutant cr-no-epoch-pin", "", 1},
		{"--mutant cr-no-epoch-pin", "tb", 0}, // a driver broken in cr only passes when only tb is checked
	} {
		t.Run("driver "+tc.driverArgs+" primitives "+tc.prims, func(t *testing.T) {
			args := []string{"--seed", "1", "--budget", "100ms", "--suites", "vectors,random", "--dir", dir}
			if tc.prims != "" {
				args = append(args, "--primitives", tc.prims)
			}
			code, out := runCaptured(t, "conform", append(append(args, "--"), helperDriver(tc.driverArgs)...))
			if code != tc.want {
				t.Fatalf("tollgate conform %s against `tollgate driver %s` exited %d, want %d:\n%s", strings.Join(args, " "), tc.driverArgs, code, tc.want, out)
			}
			if tc.want == 1 && (!strings.Contains(out, "breaks ") || strings.Contains(out, "driver garbage") || strings.Contains(out, "driver exited")) {
				t.Fatalf("against `tollgate driver %s` the failure is not an invariant broken by the mutant:\n%s", tc.driverArgs, out)
			}
		})
	}
	if code := runDriver([]string{"--mutant", "no-such-fault"}); code != 2 {
		t.Errorf("driver --mutant no-such-fault exited %d, want 2", code)
	}
	if code := runConform([]string{"--primitives", "xx", "--", "true"}); code != 2 {
		t.Errorf("conform --primitives xx exited %d, want 2", code)
	}
	if code := runConform([]string{"--budget", "1s"}); code != 2 {
		t.Errorf("conform without a driver command exited %d, want 2", code)
	}
}

// TestConformReplayLine: the replay line a failure prints is the command
// to run from the repository, as tollgate check prints it.
func TestConformReplayLine(t *testing.T) {
	got := fmt.Sprintf(conformReplay(2*time.Second, 4, []string{"elixir", "driver.exs"}), 7, "random")
	want := "go run ./cmd/tollgate conform --seed 7 --suites random --budget 2s --clients 4 -- elixir driver.exs"
	if got != want {
		t.Fatalf("replay line\n%s\nwant\n%s", got, want)
	}
}

// TestConformFailureDir: without -dir, conform writes a failure's files
// under a new temporary directory that it prints, and nothing in the
// working directory (issue 45: a committed conform-failures/ at the root).
func TestConformFailureDir(t *testing.T) {
	build.Need(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cwd := t.TempDir()
	t.Chdir(cwd)
	t.Setenv("TOLLGATE_HELPER_DRIVER", "--mutant tb-plain-store")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	code, out := runCaptured(t, "conform", []string{"--seed", "1", "--budget", "2s", "--suites", "concurrent", "--primitives", "tb",
		"--", exe, "-test.run=^TestHelperDriver$"})
	if code != 1 {
		t.Fatalf("conform against tb-plain-store exited %d, want 1:\n%s", code, out)
	}
	if left, _ := os.ReadDir(cwd); len(left) != 0 {
		t.Errorf("conform wrote %d entries into the working directory, e.g. %s", len(left), left[0].Name())
	}
	dirs, _ := os.ReadDir(tmp)
	if len(dirs) != 1 || !strings.HasPrefix(dirs[0].Name(), "tollgate-conform-") {
		t.Fatalf("want one tollgate-conform-* directory in $TMPDIR, have %v", dirs)
	}
	d := filepath.Join(tmp, dirs[0].Name())
	if files, _ := os.ReadDir(d); len(files) == 0 {
		t.Errorf("%s holds no failure file", d)
	}
	if !strings.Contains(out, "are under "+d) {
		t.Errorf("the output does not name %s:\n%s", d, out)
	}
}
