package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
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

func TestConformCommand(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		driverArgs string
		want       int
	}{
		{"", 0},
		{"--mutant tb-timestamp-regress", 1},
		{"--mutant cr-no-epoch-pin", 1},
	} {
		t.Run("driver "+tc.driverArgs, func(t *testing.T) {
			t.Setenv("TOLLGATE_HELPER_DRIVER", tc.driverArgs)
			code := runConform([]string{"--seed", "1", "--budget", "300ms", "--suites", "vectors,random", "--dir", dir,
				"--", os.Args[0], "-test.run=^TestHelperDriver$"})
			if code != tc.want {
				t.Fatalf("tollgate conform against `tollgate driver %s` exited %d, want %d", tc.driverArgs, code, tc.want)
			}
		})
	}
	if code := runDriver([]string{"--mutant", "no-such-fault"}); code != 2 {
		t.Errorf("driver --mutant no-such-fault exited %d, want 2", code)
	}
	if code := runConform([]string{"--primitives", "xx", "--", "true"}); code != 2 {
		t.Errorf("conform --primitives xx exited %d, want 2", code)
	}
	t.Setenv("TOLLGATE_HELPER_DRIVER", "--mutant cr-no-epoch-pin")
	if code := runConform([]string{"--seed", "1", "--budget", "300ms", "--suites", "vectors,random", "--primitives", "tb", "--dir", dir,
		"--", os.Args[0], "-test.run=^TestHelperDriver$"}); code != 0 {
		t.Errorf("conform --primitives tb against a driver broken in cr only exited %d, want 0", code)
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
