package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/explore/rewrite"
	"github.com/tollgate/tollgate/internal/interleave"
)

// pkgConfig is explore -pkg: the tests of a package of the user's,
// built with every package it reaches rewritten for exploration.
type pkgConfig struct {
	pkg, run, tags string
	replay         string
	strategy       string
	bound          int
	seed           uint64
	budget         interleave.Budget
	dir            string
	verbose        bool
}

// runExplorePkg rewrites c.pkg and what it imports into an overlay (the
// source stays as it is), lists what the explorer cannot control, and runs
// go test -overlay on the package with the explorer's flags.
func runExplorePkg(c pkgConfig, stdout, stderr io.Writer) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	pattern := c.pkg
	// A directory is the package in it, built in its own module (which
	// may not be the current directory's: an example module, say).
	if st, err := os.Stat(c.pkg); err == nil && st.IsDir() {
		wd, pattern = c.pkg, "."
		if wd, err = filepath.Abs(wd); err != nil {
			fmt.Fprintln(stderr, err)
			return exploreUsage
		}
	}
	res, err := rewrite.Build(rewrite.Options{Dir: wd, Patterns: []string{pattern}, Tags: c.tags})
	if err != nil {
		fmt.Fprintf(stderr, "explore -pkg %s: %v\n", c.pkg, err)
		return exploreUsage
	}
	defer os.RemoveAll(filepath.Dir(res.Overlay))
	fmt.Fprintf(stdout, "tollgate explore: %s rewritten (%d of their %s changed), the source left as it is:\n",
		plural(len(res.Packages), "package"), res.Files, plural(res.Sources, "file"))
	for _, p := range res.Packages {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	unsupported := 0
	for _, n := range res.Notes {
		if n.Unsupported {
			unsupported++
		}
	}
	if len(res.Notes) > 0 {
		fmt.Fprintf(stdout, "%d constructs the explorer cannot control (a run that reaches one stops with it named), %d notes:\n", unsupported, len(res.Notes)-unsupported)
		for _, n := range res.Notes {
			kind := "note"
			if n.Unsupported {
				kind = "cannot control"
			}
			fmt.Fprintf(stdout, "  %s: %s: %s\n", n.Pos, kind, n.What)
		}
	}
	flags, args, err := testArgs(c)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	line := append(append([]string{"go", "test"}, flags...), pattern)
	if len(args) > 0 {
		line = append(append(line, "-args"), args...)
	}
	fmt.Fprintf(stdout, "%s   (in %s, through the overlay)\n", quoteArgs(line), wd)
	if err := rewrite.Test(res, wd, pattern, flags, args, nil, stdout, stderr); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return min(ee.ExitCode(), exploreUsage)
		}
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	return explorePass
}

// testArgs are the go test flags and the test binary's arguments that
// carry c's settings.
func testArgs(c pkgConfig) (flags, args []string, err error) {
	if c.tags != "" {
		flags = append(flags, "-tags", c.tags)
	}
	if c.run != "" {
		flags = append(flags, "-run", c.run)
	}
	if c.verbose || c.replay != "" {
		flags = append(flags, "-v")
	}
	if c.replay != "" {
		args = append(args, "-explore.replay="+c.replay)
	}
	if c.tags != "" {
		args = append(args, "-explore.tags="+c.tags)
	}
	if c.dir != "" {
		dir, err := filepath.Abs(c.dir)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "-explore.dir="+dir)
	}
	if c.strategy != "" {
		args = append(args, "-explore.strategy="+c.strategy)
	}
	if c.bound > 0 {
		args = append(args, "-explore.bound="+strconv.Itoa(c.bound))
	}
	if c.seed != 0 {
		args = append(args, "-explore.seed="+strconv.FormatUint(c.seed, 10))
	}
	if c.budget.Schedules > 0 {
		args = append(args, "-explore.schedules="+strconv.Itoa(c.budget.Schedules))
	}
	if c.budget.Time > 0 {
		args = append(args, "-explore.time="+c.budget.Time.String())
	}
	return flags, args, nil
}

// plural is n thing, or n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// quoteArgs renders a command line, quoting the arguments that need it.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t'\"$\\*?[]()|&;<>") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
