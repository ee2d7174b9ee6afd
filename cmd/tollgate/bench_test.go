package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestBenchFlagsRejectBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-benchtime", "-1s"}, "-benchtime -1s: must be > 0"},
		{[]string{"-rounds", "-2"}, "-rounds -2: must be at least 1"},
		{[]string{"-memkeys", "-5"}, "-memkeys = -5: must not be negative"},
		{[]string{"-run", "("}, `-run = "(": not a regular expression`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := parseBenchFlags(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tollgate bench: ") {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	o, err := parseBenchFlags([]string{"-full"}, io.Discard)
	if err != nil || o.Benchtime != 100*time.Millisecond || o.Rounds != 6 {
		t.Errorf("-full defaults: %+v, %v", o, err)
	}
}

// TestBenchNothingSelectedExits2: a -run that selects no case is a usage
// error, as the help says: exit 2, and nothing measured.
func TestBenchNothingSelectedExits2(t *testing.T) {
	var stderr strings.Builder
	if code := runBench([]string{"-run", "no-such-case", "-memkeys", "0", "-out", t.TempDir()}, &stderr); code != 2 || !strings.Contains(stderr.String(), "matches no case") {
		t.Fatalf("exit %d, want 2 and a message saying nothing matched: %q", code, stderr.String())
	}
}

// TestBenchRefusesZeroRounds: -rounds 0 and -benchtime 0 given on the
// command line are refused naming the flag, not run as the default suite
// (issue 45).
func TestBenchRefusesZeroRounds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-rounds", "0"}, "-rounds 0: must be at least 1"},
		{[]string{"-rounds", "-1"}, "-rounds -1: must be at least 1"},
		{[]string{"-benchtime", "0s"}, "-benchtime 0s: must be > 0"},
	} {
		var errb strings.Builder
		// -run selects nothing, so a bench that takes the flag runs nothing.
		if code := runBench(append(c.args, "-run", "^nothing$"), &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("bench %v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}
