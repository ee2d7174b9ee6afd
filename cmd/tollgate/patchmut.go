package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tollgate/tollgate/internal/mutants/auto"
)

// runPatchMut is `tollgate mutants --patch FILE…`: each hand-written
// mutant judged from its patch through an -overlay (auto.JudgePatch), with
// nothing generated first.
func runPatchMut(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants --patch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quiet := fs.Bool("q", false, "print only each patch's verdict, not the builds and the baseline")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate mutants --patch [-q] FILE.patch…\n\nJudges hand-written mutants from their patches alone: each patch (a unified")
		fmt.Fprintln(stderr, "diff, paths a/… b/… from the module root, as internal/mutants/patches holds")
		fmt.Fprintln(stderr, "them) is applied into a go -overlay of the files it changes, and every layer of")
		fmt.Fprintln(stderr, "the fast profile (the unit tests, the golden vectors, the fuzz seeds, rapid,")
		fmt.Fprintln(stderr, "porcupine, the explorer) runs on the patched code. Nothing is generated and no")
		fmt.Fprintln(stderr, "file changes. Exits 1 if no layer kills a patch.\n\nflags:")
		fs.PrintDefaults()
		helpTail(stderr, "mutants --patch")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "tollgate mutants --patch: name at least one patch file")
		return 2
	}
	root, err := auto.Root()
	if err != nil {
		fmt.Fprintln(stderr, "tollgate mutants --patch:", err)
		return 2
	}
	cfg := auto.Config{Root: root}
	if !*quiet {
		cfg.Log = func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	}
	code := 0
	for _, p := range fs.Args() {
		v, err := auto.JudgePatch(cfg, p)
		if err != nil {
			fmt.Fprintln(stderr, "tollgate mutants --patch:", err)
			return 1
		}
		fmt.Fprint(stdout, v.Report())
		if !v.Killed() {
			code = 1
		}
	}
	return code
}
