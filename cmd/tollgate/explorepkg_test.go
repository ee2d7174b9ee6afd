package main

import (
	"bytes"
	"io"
	"path/filepath"
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
		{[]string{"-pkg", ".", "-run", "TestX", "-replay", "0x"}, "schedule"},
		{[]string{"-pkg", ".", "-run", "TestX", "-replay", "0:t1@0x"}, "schedule"},
		{[]string{"-pkg", ".", "-replay", "0x2"}, "-replay 0x2 needs -run naming the one test"},
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

// TestExploreHelpLeadsWithPkg: explore -h opens with how to explore one's
// own code, not with tollgate's scenarios.
func TestExploreHelpLeadsWithPkg(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runExplore([]string{"-h"}, &out, &errb); code != explorePass {
		t.Fatalf("explore -h: exit %d", code)
	}
	help := errb.String()
	first, _, _ := strings.Cut(help, "\n")
	if !strings.HasPrefix(first, "usage: tollgate explore -pkg DIR") {
		t.Errorf("explore -h opens with %q, want the -pkg usage", first)
	}
	if p, c := strings.Index(help, "Explore your own code"), strings.Index(help, "scenarios of the catalogue"); p < 0 || c < 0 || p > c {
		t.Errorf("explore -h: the -pkg paragraph (at %d) is not before the catalogue (at %d)", p, c)
	}
	if !strings.Contains(help, "replace line") {
		t.Error("explore -h does not say how to use it from another module")
	}
}

// TestPlural: "1 file", "2 files".
func TestPlural(t *testing.T) {
	if got := plural(1, "file") + ", " + plural(2, "package") + ", " + plural(0, "file"); got != "1 file, 2 packages, 0 files" {
		t.Errorf("plural: %s", got)
	}
}

// TestExplorePkgPassesDirAndTags: with -pkg, -dir reaches the test binary
// (where a failure's visualization goes; none without it) and -tags both
// go test and the binary (whose replay command repeats them).
func TestExplorePkgPassesDirAndTags(t *testing.T) {
	c, err := parseExplore([]string{"-pkg", ".", "-tags", "integration", "-dir", "out", "-run", "TestX", "-replay", "0x2.1x1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	flags, args, err := testArgs(*c.pkg)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("out")
	got := strings.Join(flags, " ") + " -args " + strings.Join(args, " ")
	want := "-tags integration -run TestX -v -args -explore.replay=0x2.1x1 -explore.tags=integration -explore.dir=" + abs
	if got != want {
		t.Errorf("go test %s\nwant    %s", got, want)
	}
	c, err = parseExplore([]string{"-pkg", "."}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, args, _ := testArgs(*c.pkg); len(args) != 0 {
		t.Errorf("without flags the test binary gets %v (the default -dir must not be passed)", args)
	}
}
