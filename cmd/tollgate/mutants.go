package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
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

// mutants is the mutants command with its output streams, for tests.
func mutants(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--auto" || args[0] == "-auto") {
		return runAutomut(args[1:], stdout, stderr) // automut.go
	}
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.Bool("list", false, "print one mutant per line with the layers expected to kill it, and exit")
	budget := fs.Duration("budget", 3*time.Second, "time budget per (mutant, layer)")
	seed := fs.Uint64("seed", 0, "seed for every hunt (0: derived from the clock, printed)")
	only := fs.String("mutant", "", "comma-separated mutant names to run (default: all)")
	layerNames := fs.String("layer", "", "comma-separated layer names to run (default: all)")
	verbose := fs.Bool("v", false, "print each kill's failure report under the table")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate mutants [flags]\n\nRuns every fault of internal/fault against every registered layer and prints")
		fmt.Fprintln(stderr, "mutant, layer, killed/survived, property, time to kill and a replay command. A kill")
		fmt.Fprintln(stderr, "counts only if the same layer passes on the real implementation with the same case")
		fmt.Fprintln(stderr, "(input or seed); a layer that fails there is an error. Exits 1 on such an error or")
		fmt.Fprintln(stderr, "if a mutant survives a layer that should see it.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tollgate mutants: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *budget <= 0 {
		fmt.Fprintf(stderr, "tollgate mutants: -budget must be > 0, got %v\n", *budget)
		return 2
	}
	faults, err := selectFaults(*only)
	if err != nil {
		fmt.Fprintf(stderr, "tollgate mutants: -mutant: %v\n", err)
		return 2
	}
	layers, err := selectLayers(*layerNames)
	if err != nil {
		fmt.Fprintf(stderr, "tollgate mutants: -layer: %v\n", err)
		return 2
	}
	if *list {
		for _, f := range faults {
			names := []string{f.String()}
			for _, l := range layers {
				if l.Sees(f) {
					names = append(names, l.Name)
				}
			}
			fmt.Fprintln(stdout, strings.Join(names, " "))
		}
		return 0
	}
	if len(layers) == 0 {
		fmt.Fprintln(stderr, "tollgate mutants: no checking layer is registered")
		return 1
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	fmt.Fprintf(stdout, "seed %d, budget %v per (mutant, layer)\n\n", *seed, *budget)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tLAYER\tEXPECTED\tRESULT\tPROPERTY\tTIME\tSEED\tREPLAY")
	bad := 0
	var details []string
	onReal := &mutant.Real{Budget: *budget, Seed: *seed}
	var alarms falseAlarms
	for _, f := range faults {
		for _, l := range layers {
			sees := l.Sees(f)
			out := l.Hunt(f, *budget, *seed)
			expected, result, verdict := "survive", "survived", ""
			if sees {
				expected = "kill"
			}
			switch {
			case out.Killed:
				if r := onReal.Check(l, out); r.Killed {
					result, verdict = "ERROR", "  <- ERROR: the layer fails on the real implementation too: not a kill"
					alarms.add(l.Name, f, r)
					break
				}
				result = "killed"
			case sees:
				verdict = "  <- FAIL: should be killed"
				bad++
			}
			prop, replay := out.Property, out.Replay
			if prop == "" {
				prop = "-"
			}
			if replay == "" {
				replay = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s%s\n", f, l.Name, expected, result, prop,
				roundDuration(out.Elapsed), out.Seed, replay, verdict)
			if *verbose && out.Detail != "" {
				details = append(details, fmt.Sprintf("--- %s / %s\n%s", f, l.Name, strings.TrimRight(out.Detail, "\n")))
			}
		}
	}
	tw.Flush()
	for _, d := range details {
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, d)
	}
	if len(alarms) > 0 {
		alarms.print(stderr, *seed)
		fmt.Fprintf(stdout, "\nERROR: %d layer failure(s) on the real implementation (on stderr): the rows marked ERROR are not kills\n", len(alarms))
	}
	if bad > 0 {
		fmt.Fprintf(stdout, "\n%d mutant/layer pair(s) survived a layer that should kill them\n", bad)
	}
	if bad > 0 || len(alarms) > 0 {
		return 1
	}
	fmt.Fprintln(stdout, "\nevery mutant was killed by every layer expected to see it")
	return 0
}

// falseAlarm is one failure of a layer on the real implementation, with
// the mutants whose hunts found the case.
type falseAlarm struct {
	layer   string
	real    mutant.Outcome
	mutants []string
}

// falseAlarms collects the failures on the real implementation; a case
// that several mutants' hunts found is one failure.
type falseAlarms []*falseAlarm

func (a *falseAlarms) add(layer string, f fault.Fault, r mutant.Outcome) {
	for _, x := range *a {
		if x.layer == layer && x.real.Property == r.Property && x.real.Replay == r.Replay && x.real.Detail == r.Detail {
			x.mutants = append(x.mutants, f.String())
			return
		}
	}
	*a = append(*a, &falseAlarm{layer, r, []string{f.String()}})
}

func (a falseAlarms) print(w io.Writer, seed uint64) {
	for _, x := range a {
		prop, replay := x.real.Property, x.real.Replay
		if prop == "" {
			prop = "a failure"
		}
		if replay == "" {
			replay = "(the layer names none)"
		}
		seeds := fmt.Sprintf("seed %d", seed)
		if x.real.Seed != 0 && x.real.Seed != seed {
			seeds += fmt.Sprintf(" (case seed %d)", x.real.Seed)
		}
		fmt.Fprintf(w, "tollgate mutants: ERROR: layer %s fails on the real implementation (fault none), %s: %s\n", x.layer, seeds, prop)
		fmt.Fprintf(w, "  case: %s\n", replay)
		for _, l := range strings.Split(strings.TrimRight(x.real.Detail, "\n"), "\n") {
			fmt.Fprintf(w, "  | %s\n", l)
		}
		fmt.Fprintf(w, "  found hunting %s; not counted as kills\n", strings.Join(x.mutants, ", "))
	}
}

// roundDuration keeps three significant figures or so: kills take from
// microseconds to seconds.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < time.Second:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func selectFaults(names string) ([]fault.Fault, error) {
	if names == "" {
		return fault.All(), nil
	}
	var out []fault.Fault
	for _, n := range strings.Split(names, ",") {
		f, err := fault.Parse(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		if f.Redis() {
			return nil, fmt.Errorf("%s is a mutant of %s, which needs a redis-server: the in-process layers here cannot run it", f, f.Package())
		}
		out = append(out, f)
	}
	return out, nil
}

func selectLayers(names string) ([]mutant.Layer, error) {
	all := mutant.Layers()
	if names == "" {
		return all, nil
	}
	var out []mutant.Layer
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, l := range all {
			if l.Name == n {
				out, found = append(out, l), true
			}
		}
		if !found {
			known := make([]string, 0, len(all))
			for _, l := range all {
				known = append(known, l.Name)
			}
			return nil, fmt.Errorf("unknown layer %q (registered: %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}
