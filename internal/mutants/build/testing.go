package build

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// childEnv marks the child test binary, built with the overlay: a test
// that still finds the mutants missing there fails instead of asking
// again.
const childEnv = "TOLLGATE_MUTANTS_CHILD"

var (
	mu      sync.Mutex
	wrapped bool     // Wrap's Run is running the tests
	asked   []string // the top-level tests that called Need
)

// Need makes t run with the mutants compiled in. When they are, it
// returns. When they are not, it records t's top-level test to be run
// again in the child build (Wrap) and skips t here, saying so. The
// package's TestMain must run the tests through Main or Wrap; Need fails
// t when it does not, so no test of the mutants is skipped and forgotten.
func Need(t testing.TB) {
	t.Helper()
	if compiled {
		return
	}
	if os.Getenv(childEnv) != "" {
		t.Fatal("build: the child test binary was built with the mutants' overlay but they are not compiled in (defect)")
	}
	mu.Lock()
	ok := wrapped
	top, _, _ := strings.Cut(t.Name(), "/")
	if ok && !contains(asked, top) {
		asked = append(asked, top)
	}
	mu.Unlock()
	if !ok {
		t.Fatal("build: this test needs the mutants, which are built through an overlay: the package's TestMain must run its tests through build.Main or build.Wrap (internal/mutants/build)")
	}
	t.Skipf("the mutants are not compiled in: %s runs after the other tests in this package's test binary rebuilt with the overlay of internal/mutants/patches", top)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Runner runs a package's tests: *testing.M, or what Wrap returns.
type Runner interface{ Run() int }

// Wrap returns m's tests as a Runner that, after them, when some called
// Need and the mutants are not compiled in, builds the package's test
// binary with the overlay of the mutants (one build, whichever tests
// asked) and runs the tests that asked in it, with this run's test flags,
// its output on this one's. Run's status fails when either run does.
//
// examples names the package's examples that use a mutant (an example
// cannot call Need): without the mutants they are left out of this run
// (-test.skip) and run in the child, when this run's -test.run selects
// them.
func Wrap(m Runner, examples ...string) Runner { return wrapper{m, examples} }

// Main runs m through Wrap and exits with its status.
func Main(m *testing.M, examples ...string) { os.Exit(Wrap(m, examples...).Run()) }

type wrapper struct {
	m        Runner
	examples []string
}

func (w wrapper) Run() int {
	mu.Lock()
	wrapped = true
	mu.Unlock()
	if !compiled && len(w.examples) > 0 {
		if err := deferExamples(w.examples); err != nil {
			fmt.Fprintln(os.Stderr, "build:", err)
			return 2
		}
	}
	code := w.m.Run()
	mu.Lock()
	tests := append([]string(nil), asked...)
	mu.Unlock()
	if compiled || len(tests) == 0 {
		return code
	}
	if err := runChild(tests); err != nil {
		fmt.Fprintf(os.Stdout, "--- FAIL: the tests of the mutants (%s), run in a build with the overlay: %v\nFAIL\n", strings.Join(tests, ", "), err)
		return 1
	}
	return code
}

// deferExamples leaves examples out of this run and records those that
// -test.run selects for the child.
func deferExamples(examples []string) error {
	if !flag.Parsed() {
		flag.Parse()
	}
	quoted := make([]string, len(examples))
	for i, e := range examples {
		quoted[i] = regexp.QuoteMeta(e)
	}
	skip := "^(" + strings.Join(quoted, "|") + ")$"
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		skip = f.Value.String() + "|" + skip
	}
	if err := flag.Set("test.skip", skip); err != nil {
		return err
	}
	run := ""
	if f := flag.Lookup("test.run"); f != nil {
		run, _, _ = strings.Cut(f.Value.String(), "/")
	}
	re, err := regexp.Compile(run)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range examples {
		if re.MatchString(e) {
			asked = append(asked, e)
		}
	}
	return nil
}

// runChild builds the test binary of the package in the working directory
// (go test runs a test binary in its package's directory) with the
// overlay, and runs tests in it. The binary is kept (keptBinary): a
// second run of an unchanged package does not link it again.
func runChild(tests []string) error {
	root, err := Root()
	if err != nil {
		return err
	}
	t0 := time.Now()
	json, err := Cached(root)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	pkg, err := filepath.Rel(root, wd)
	if err != nil {
		return err
	}
	args := append([]string{"test", "-c", "-vet=off", "-overlay", json}, buildFlags()...)
	bin, release, ok, err := keptBinary(json, binaryName("test", filepath.ToSlash(pkg))+".test", root, ".", args, ".")
	if err != nil {
		return err
	}
	if !ok {
		dir, err := os.MkdirTemp("", "tollgate-mutants-test-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin, release = filepath.Join(dir, "mutants.test"), func() {}
		if err := goBuild(".", append(args, "-o", bin, ".")...); err != nil {
			return err
		}
	}
	defer release()
	fmt.Fprintf(os.Stdout, "build: the mutants are not compiled in; built this package's tests with the overlay of internal/mutants/patches in %v, running %s there\n", time.Since(t0).Round(10*time.Millisecond), strings.Join(tests, ", "))
	cmd := exec.Command(bin, childArgs(os.Args[1:], tests)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd.Run()
}

// childArgs are the child's arguments: this run's, less what names the
// tests to run or belongs to go test's bookkeeping of this binary (with
// its value, whether after = or as the next argument), and a -test.run
// that selects tests.
func childArgs(args, tests []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "test.run", "test.skip", "test.testlogfile", "test.gocoverdir", "test.coverprofile", "test.fuzzcachedir":
			if !hasValue && strings.HasPrefix(a, "-") {
				i++ // "-test.run X": the value is the next argument
			}
			continue
		}
		out = append(out, a)
	}
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return append(out, "-test.run=^("+strings.Join(quoted, "|")+")$")
}
