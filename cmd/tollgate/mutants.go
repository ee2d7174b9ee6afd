package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
)

func init() {
	register(command{
		name:    "mutants",
		summary: "run every mutant (deliberately broken variant) against every checking layer",
		run:     runMutants,
	})
}

func runMutants(args []string) int {
	return mutants(args, os.Stdout, os.Stderr)
}

// mutants is the mutants command with its output streams, for tests: it
// parses the flags and runs the matrix (mutant.Run) or, with --list, writes
// its tables (mutant.WriteTables; with -readme, rewrites them in a file).
func mutants(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--auto" || args[0] == "-auto") {
		return runAutomut(args[1:], stdout, stderr) // automut.go
	}
	if len(args) > 0 && (args[0] == "--patch" || args[0] == "-patch") {
		return runPatchMut(args[1:], stdout, stderr) // patchmut.go
	}
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.Bool("list", false, "write the README's mutant tables (each mutant, its bug, the layers expected to kill it and their measured kills) from the patches' headers, and exit")
	readme := fs.String("readme", "", "with --list: rewrite the mutant tables in this markdown `file` (docs/checks.md) instead of printing them")
	budget := fs.Duration("budget", 3*time.Second, "time budget per (mutant, layer)")
	seed := fs.Uint64("seed", 0, "seed for every hunt (0: derived from the clock, printed)")
	only := fs.String("mutant", "", "comma-separated mutant names to run (default: all)")
	layerNames := fs.String("layer", "", "comma-separated layer names to run (default: all)")
	verbose := fs.Bool("v", false, "print each kill's failure report under the table")
	expected := fs.Bool("expected", false, "hunt only the (mutant, layer) pairs expected to kill (the patches' Caught-by); the others can only survive, or show a kill no claim rests on")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate mutants [flags]\n\nRuns every fault of internal/fault against every registered layer and prints")
		fmt.Fprintln(stderr, "mutant, layer, killed/survived, property, time to kill and a replay command. A kill")
		fmt.Fprintln(stderr, "counts only if the same layer passes on the real implementation with the same case")
		fmt.Fprintln(stderr, "(input or seed); a layer that fails there is an error.")
		fmt.Fprintln(stderr, "\n`tollgate mutants --auto [flags]` runs the generated-mutant campaign instead")
		fmt.Fprintln(stderr, "(mutants of impl/ and model/ made by rule; its own flags: --auto -h).\n\nflags:")
		fs.PrintDefaults()
		helpTail(stderr, "mutants")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tollgate mutants: "+format+"\n", a...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected arguments %q", fs.Args())
	case *budget <= 0:
		return fail("-budget must be > 0, got %v", *budget)
	case *readme != "" && (!*list || *only != "" || *layerNames != ""):
		return fail("-readme rewrites the whole tables: give it with --list and without -mutant or -layer")
	}
	faults, err := mutant.SelectFaults(*only)
	if err != nil {
		return fail("-mutant: %v", err)
	}
	layers, err := mutant.SelectLayers(*layerNames)
	if err != nil {
		return fail("-layer: %v", err)
	}
	if *list {
		return listTables(stdout, stderr, *readme, faults, layers, *only == "")
	}
	if len(layers) == 0 {
		fmt.Fprintln(stderr, "tollgate mutants: no checking layer is registered")
		return 1
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	return mutant.Run{Faults: faults, Layers: layers, Budget: *budget, Seed: *seed, Verbose: *verbose, Expected: *expected}.Do(stdout, stderr)
}

// listTables is --list: the README's mutant tables for faults with a
// column per layer of layers (and the table of the server-backed mutants,
// Redis and etcd, when redis is set) written to stdout, or rewritten in
// the file readme.
func listTables(stdout, stderr io.Writer, readme string, faults []fault.Fault, layers []mutant.Layer, redis bool) int {
	if readme != "" {
		changed, err := mutant.RewriteReadme(readme)
		if err != nil {
			fmt.Fprintf(stderr, "tollgate mutants: -readme: %v\n", err)
			return 1
		}
		if changed {
			fmt.Fprintf(stdout, "rewrote the mutant tables of %s\n", readme)
		}
		return 0
	}
	names := make([]string, len(layers))
	for i, l := range layers {
		names[i] = l.Name
	}
	if err := mutant.WriteTables(stdout, faults, names, redis); err != nil {
		fmt.Fprintf(stderr, "tollgate mutants: %v\n", err)
		return 1
	}
	return 0
}
