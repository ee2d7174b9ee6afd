package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestExplorePkgFlags: explore -pkg and -targets refuse the catalogue's
// flags and bad values, naming the flag, with the usage exit code.
func TestExplorePkgFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-pkg", ".", "-scenario", "cr-enqueue-twice"}, "-scenario does not apply with -pkg"},
		{[]string{"-pkg", ".", "-mutant", "tb-plain-store"}, "-mutant does not apply with -pkg"},
		{[]string{"-pkg", ".", "-bound", "0"}, "-bound 0: with -pkg it must be at least 1"},
		{[]string{"-pkg", ".", "-strategy", "bfs"}, `-strategy "bfs"`},
		{[]string{"-pkg", ".", "-replay", "0x"}, "schedule"},
		{[]string{"-pkg", ".", "-budget", "lots"}, "budget"},
		{[]string{"-run", "TestX"}, "-run and -tags go with -pkg"},
		{[]string{"-targets", "nosuch"}, `unknown target "nosuch"`},
		{[]string{"-targets", "xtime,uber", "-versions", "v0.1.0"}, "needs exactly one target"},
	} {
		var out, errb bytes.Buffer
		if code := runExplore(tc.args, &out, &errb); code != exploreUsage {
			t.Errorf("%v: exit %d, want %d (usage)", tc.args, code, exploreUsage)
		}
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: stderr %q does not say %q", tc.args, errb.String(), tc.want)
		}
	}
}

// TestQuoteArgs: the printed go test line can be pasted into a shell.
func TestQuoteArgs(t *testing.T) {
	got := quoteArgs([]string{"go", "test", "-run", "^TestX$", ".", "-args", "-explore.replay=0x2.1x4"})
	want := `go test -run '^TestX$' . -args -explore.replay=0x2.1x4`
	if got != want {
		t.Errorf("quoteArgs = %s, want %s", got, want)
	}
}
