package mutant

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
)

// Run is one run of the mutant matrix: every fault of Faults against every
// layer of Layers.
type Run struct {
	Faults  []fault.Fault
	Layers  []Layer
	Budget  time.Duration // per (mutant, layer)
	Seed    uint64        // for every hunt
	Verbose bool          // print each kill's failure report under the table
	// Expected, when set, hunts only the pairs whose layer is expected to
	// kill the mutant (Layer.Sees). A pair expected to survive can fail
	// the run only through a kill the layer also reports on the real
	// implementation, which every expected pair's kill is checked for
	// already; hunting it spends the whole budget to confirm a survival no
	// claim rests on.
	Expected bool
}

// Do hunts every fault with every layer and writes one row per pair to
// stdout (mutant, layer, expected, result, property, time to kill, seed,
// replay command), then the verdict; the failures of a layer on the real
// implementation go to stderr. A kill counts only if the layer passes on
// the real implementation with the same case (Real); one that fails there
// too is an error, not a kill. Do returns the exit code: 1 when a mutant
// survived a layer that should see it or a layer failed on the real
// implementation, 0 otherwise.
func (r Run) Do(stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "seed %d, budget %v per (mutant, layer)\n\n", r.Seed, r.Budget)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tLAYER\tEXPECTED\tRESULT\tPROPERTY\tTIME\tSEED\tREPLAY")
	bad := 0
	var details []string
	onReal := &Real{Budget: r.Budget, Seed: r.Seed}
	var alarms falseAlarms
	for _, f := range r.Faults {
		for _, l := range r.Layers {
			sees := l.Sees(f)
			if r.Expected && !sees {
				continue
			}
			out := l.Hunt(f, r.Budget, r.Seed)
			result, verdict := judge(onReal, l, f, out, &alarms)
			if result == "survived" && sees {
				verdict = "  <- FAIL: should be killed"
				bad++
			}
			fmt.Fprintln(tw, row(f, l, sees, result, out)+verdict)
			if r.Verbose && out.Detail != "" {
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
		alarms.print(stderr, r.Seed)
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

// judge reads l's outcome on f: "killed" when the layer passes on the real
// implementation with the same case, "ERROR" (with the row's marker, and
// the failure added to alarms) when it fails there too, "survived" when it
// found nothing.
func judge(onReal *Real, l Layer, f fault.Fault, out Outcome, alarms *falseAlarms) (result, verdict string) {
	if !out.Killed {
		return "survived", ""
	}
	if r := onReal.Check(l, out); r.Killed {
		alarms.add(l.Name, f, r)
		return "ERROR", "  <- ERROR: the layer fails on the real implementation too: not a kill"
	}
	return "killed", ""
}

// row is one pair's tab-separated row, without its verdict.
func row(f fault.Fault, l Layer, sees bool, result string, out Outcome) string {
	expected := "survive"
	if sees {
		expected = "kill"
	}
	prop, replay := out.Property, out.Replay
	if prop == "" {
		prop = "-"
	}
	if replay == "" {
		replay = "-"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s", f, l.Name, expected, result, prop, roundDuration(out.Elapsed), out.Seed, replay)
}

// falseAlarm is one failure of a layer on the real implementation, with
// the mutants whose hunts found the case.
type falseAlarm struct {
	layer   string
	real    Outcome
	mutants []string
}

// falseAlarms collects the failures on the real implementation; a case
// that several mutants' hunts found is one failure.
type falseAlarms []*falseAlarm

func (a *falseAlarms) add(layer string, f fault.Fault, r Outcome) {
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

// SelectFaults returns the in-memory faults named in names, a
// comma-separated list; every one of fault.All when names is empty. A
// fault of a server-backed table is refused: the in-process layers cannot
// run it.
func SelectFaults(names string) ([]fault.Fault, error) {
	if names == "" {
		return fault.All(), nil
	}
	var out []fault.Fault
	for _, n := range strings.Split(names, ",") {
		f, err := fault.Parse(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		if f.Server() {
			return nil, fmt.Errorf("%s is a mutant of %s, which needs a server: the in-process layers here cannot run it", f, f.Package())
		}
		out = append(out, f)
	}
	return out, nil
}

// SelectLayers returns the registered layers named in names, a
// comma-separated list, in that order; every registered layer, by name,
// when names is empty.
func SelectLayers(names string) ([]Layer, error) {
	all := Layers()
	if names == "" {
		return all, nil
	}
	var out []Layer
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
