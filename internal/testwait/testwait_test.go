package testwait

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain runs the tests with Parallel(4), as a package whose tests wait
// does.
func TestMain(m *testing.M) {
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	Parallel(4)
	os.Exit(m.Run())
}

// given says whether the command line set -test.parallel.
var given bool

// TestFourAtOnce: four parallel tests that each wait for the other three
// to start finish only when four run at once; with go test's default on
// 2 cores they would never all start.
func TestFourAtOnce(t *testing.T) {
	if given {
		t.Skip("-test.parallel is set on the command line, which Parallel keeps (TestCommandLineWins)")
	}
	if got := flag.Lookup("test.parallel").Value.String(); got != "4" {
		t.Fatalf("-test.parallel is %s, want 4", got)
	}
	started := make(chan struct{}, 4)
	for i := range 4 {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			t.Parallel()
			started <- struct{}{}
			deadline := time.After(10 * time.Second)
			for len(started) < 4 {
				select {
				case <-deadline:
					t.Fatalf("only %d of 4 parallel tests started", len(started))
				case <-time.After(time.Millisecond):
				}
			}
		})
	}
}

// TestCommandLineWins: a -test.parallel on the command line is kept.
func TestCommandLineWins(t *testing.T) {
	if os.Getenv("TESTWAIT_CHILD") != "" {
		if got := flag.Lookup("test.parallel").Value.String(); got != "1" {
			t.Fatalf("-test.parallel is %s, want the command line's 1", got)
		}
		return
	}
	out, err := childCmd().CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCommandLineWins") {
		t.Fatalf("the child with -test.parallel=1: %v\n%s", err, out)
	}
}

func TestBadN(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "at least 1") {
			t.Fatalf("Parallel(0) recovered %v, want a panic naming the rule", r)
		}
	}()
	Parallel(0)
}

func childCmd() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCommandLineWins$", "-test.parallel=1", "-test.v")
	cmd.Env = append(os.Environ(), "TESTWAIT_CHILD=1")
	return cmd
}
