package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants/auto"
	"github.com/tollgate/tollgate/internal/shard"
)

// runAutomut is `tollgate mutants --auto`: the automatic mutation campaign
// (internal/mutants/auto.Run) with its flags.
func runAutomut(args []string, stdout, stderr io.Writer) int {
	var o auto.Options
	fs := flag.NewFlagSet("mutants --auto", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pkgs := fs.String("packages", strings.Join(auto.DefaultPackages, ","), "comma-separated package directories to mutate (their non-test, non-generated files of the default build)")
	files := fs.String("files", "", "comma-separated files to mutate instead (slash paths from the module root)")
	fs.BoolVar(&o.Changed, "changed", false, "mutate only the lines changed since -base (the CI mode)")
	fs.StringVar(&o.Base, "base", "", "with -changed: the commit to compare with (default: the merge base with origin/main when that differs from HEAD, else HEAD~1)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "mutants judged at once")
	fs.StringVar(&o.Out, "out", "", "write the summary and the per-mutant table to this file (the full campaign writes "+auto.ResultsFile+")")
	fs.BoolVar(&o.List, "list", false, "print the mutants that would be judged, and exit")
	fs.BoolVar(&o.Quiet, "q", false, "print no per-mutant progress")
	fs.IntVar(&o.Max, "max", 0, "judge at most this many mutants, evenly spaced (0: all; with -shard, per shard)")
	fs.StringVar(&o.Match, "match", "", "judge only the mutants whose ID matches this regular expression")
	fs.StringVar(&o.IDsFrom, "ids-from", "", "judge only the mutants whose IDs this file holds, one a line after its last two spaces (the unlisted survivors a campaign printed, or its -out table)")
	conc := fs.Bool("concurrency", false, "the concurrency operators instead (Bradbury, Cordy and Dingel's, adapted to Go's atomics: cc-cas-split, cc-swap, cc-hoist-load, cc-drop-recheck, cc-plain-store, cc-one-attempt, cc-drop-epoch, cc-torn-load), at every atomic site of "+strings.Join(auto.ConcurrencyPackages, " and ")+", judged by the default explore run alone; the full campaign writes "+auto.ConcurrencyResultsFile)
	shardFlag := fs.String("shard", "", "judge only shard `i/n` (1-based, e.g. 2/4) of the mutants, split by ID: shards 1/n … n/n together judge each mutant once (one CI runner each)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate mutants --auto [flags]\n\nGenerates mutants of impl/ and model/ (arithmetic, comparison boundary and")
		fmt.Fprintln(stderr, "negation, logical, increment/decrement, sign, statement removal, compare-and-swap")
		fmt.Fprintln(stderr, "as a store or a load then a store, a dropped conversion) and judges each by the")
		fmt.Fprintln(stderr, "whole suite's fast profile, cheapest layer first. Exits 1 if a mutant survives")
		fmt.Fprintln(stderr, "that "+auto.EquivalentFile+" does not list as equivalent.\n\nflags:")
		fs.PrintDefaults()
		helpTail(stderr, "mutants --auto")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tollgate mutants --auto: unexpected arguments %q\n", fs.Args())
		return 2
	}
	o.Packages = strings.Split(*pkgs, ",")
	if *conc {
		o.Set = auto.Concurrency
		pkgsSet := false
		fs.Visit(func(f *flag.Flag) { pkgsSet = pkgsSet || f.Name == "packages" })
		if !pkgsSet {
			o.Packages = auto.ConcurrencyPackages
		}
	}
	if *files != "" {
		o.Files = strings.Split(*files, ",")
	}
	var err error
	if o.Shard, err = shard.Parse(*shardFlag); err != nil {
		fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
		return 2
	}
	root, err := auto.Root()
	if err != nil {
		fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
		return 2
	}
	pass, err := auto.Run(root, o, stdout)
	switch {
	case errors.Is(err, auto.ErrUsage):
		fmt.Fprintln(stderr, "tollgate mutants --auto:", strings.TrimPrefix(err.Error(), auto.ErrUsage.Error()+": "))
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
		return 1
	case !pass:
		return 1
	}
	return 0
}
