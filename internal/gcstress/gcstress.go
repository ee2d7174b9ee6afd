// Package gcstress runs a test again in a child process whose garbage
// collector runs almost all the time and overwrites what it frees, so that
// a string or slice the collector was wrongly allowed to free reads as
// 0xdeadbeef at once instead of, now and then, as whatever was allocated
// there next.
//
// A wrongly freed object comes from unsafe code that hides a pointer, or
// from the compiler taking a variable for dead while a pointer into it is
// still used (spec/etcd.md §6 records one: Go 1.24 through 1.27.3 on amd64).
// Neither the race detector nor checkptr sees either; a test that checks
// every value it reads back does, once the freed memory is clobbered.
//
// Use it at the top of a test:
//
//	func TestStorm(t *testing.T) {
//		if !gcstress.Child(t) {
//			return // this process ran the test in a child, and reported it
//		}
//		... the test's body, run in the child ...
//	}
package gcstress

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Settings is what the child runs with: a collection each time the heap
// grows by 5%, and every freed object overwritten with 0xdeadbeef.
const Settings = "GOGC=5 GODEBUG=clobberfree=1"

// mark names, in the child's environment, the test it is to run.
const mark = "TOLLGATE_GCSTRESS_TEST"

// Child reports whether this process is the child for t and should run
// t's body. In any other process it runs t alone in a child (the test
// binary again, with Settings in its environment and the same flags) and
// returns false, after failing t with the child's output if the child
// failed. When GOGC and GODEBUG already carry Settings (a run of the whole
// suite under them), it returns true and starts no child.
func Child(t *testing.T) bool {
	t.Helper()
	if os.Getenv(mark) == t.Name() || underSettings() {
		return true
	}
	if out, args, err := run(t.Name()); err != nil {
		t.Fatalf("%s under %s: %v\n%s\nreplay: %s %s %s", t.Name(), Settings, err, out, Settings, os.Args[0], strings.Join(args, " "))
	}
	return false
}

// run runs the test called name alone in a child process under Settings
// and returns its output, its arguments and its error.
func run(name string) ([]byte, []string, error) {
	args := []string{"-test.run=" + runPattern(name), "-test.count=1", "-test.v"}
	for _, a := range os.Args[1:] {
		if keep(a) {
			args = append(args, a)
		}
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mark+"="+name)
	for _, kv := range strings.Fields(Settings) {
		k, v, _ := strings.Cut(kv, "=")
		if k == "GODEBUG" {
			if old := os.Getenv(k); old != "" {
				v = old + "," + v
			}
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return out, args, err
}

// underSettings reports whether this process already runs under Settings.
func underSettings() bool {
	return os.Getenv("GOGC") == "5" && strings.Contains(os.Getenv("GODEBUG"), "clobberfree=1")
}

// runPattern matches exactly the test called name (subtests included).
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// keep reports whether the child gets flag a of this process: the
// package's own flags (such as -long) and the race-free test flags, not
// those that select tests or write files.
func keep(a string) bool {
	if !strings.HasPrefix(a, "-test.") {
		return true
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(a, "-test."), "=")
	switch name {
	case "timeout", "short", "failfast":
		return true
	}
	return false
}
