package mainjob

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the summary table.
type row struct {
	primitive, check string
	histories, ops   int    // histories checked (for the sequential check, random inputs) and their operations
	unknown          int    // operations whose outcome was unknown (-1: not applicable)
	durability       string // a fault workload's check of acknowledged writes
	overlapping      int    // operations that overlapped another (-1: not applicable)
	result           string
	invariant        string // the spec ID the first failure breaks ("" when none failed)
	checkTime        time.Duration
}

func printSummary(w io.Writer, rows []row) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "primitive\tcheck\thistories\toperations\tunknown\toverlapping\tresult\tbreaks\tcheck time\t")
	var notes []string
	for _, r := range rows {
		over, breaks, unknown := "-", "-", "-"
		if r.overlapping >= 0 {
			over = fmt.Sprint(r.overlapping)
		}
		if r.unknown >= 0 {
			unknown = fmt.Sprint(r.unknown)
		}
		if r.invariant != "" {
			breaks = r.invariant
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%v\t\n", r.primitive, r.check, r.histories, r.ops, unknown, over, r.result, breaks, r.checkTime.Round(time.Millisecond))
		if r.durability != "" {
			notes = append(notes, fmt.Sprintf("  %s %s: %s", r.primitive, r.check, r.durability))
		}
	}
	tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintln(w, "acknowledged writes, checked directly after each fault workload:")
		fmt.Fprintln(w, strings.Join(notes, "\n"))
	}
	fmt.Fprintln(w, "(histories: for the sequential check, random inputs, each one sequence of operations; unknown: operations whose outcome")
	fmt.Fprintln(w, "no one can know — an answer the workload drops, as if its caller died before it arrived, or a server's time-out — which")
	fmt.Fprintln(w, "the checker may take as done or not done; overlapping: operations whose call-return interval met another's, i.e. whose order the checker")
	fmt.Fprintln(w, "had to find; breaks: the spec invariant the first failure breaks; a history porcupine could not decide in -timeout is")
	fmt.Fprintln(w, "undecided, and makes the result Unknown)")
}
