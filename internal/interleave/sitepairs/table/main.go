// Command table renders the interleaving coverage of the tables
// (spec/explore-site-pairs.md) from what tollgate explore -site-pairs wrote:
//
//	go run ./internal/interleave/sitepairs/table -covered pairs.txt
//
// Run from the module root. It exits 1 when a pair it must see covered is
// not (see sitepairs.Render).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/interleave/sitepairs"
)

func main() {
	covered := flag.String("covered", "", "the file tollgate explore -site-pairs wrote")
	reasons := flag.String("reasons", "internal/interleave/sitepairs/testdata/reasons.txt", "the reasons pairs are not covered")
	runs := flag.String("runs", "", "comma-separated files tollgate explore -site-pair-runs wrote (a deeper search): with -write-runs, keep the runs that cover open pairs")
	writeRuns := flag.String("write-runs", "", "with -runs: write the runs that cover pairs -covered leaves open to this file (internal/interleave/pairruns.txt), instead of the table")
	flag.Parse()
	if *covered == "" {
		fmt.Fprintln(os.Stderr, "table: -covered is required: the file tollgate explore -site-pairs wrote")
		os.Exit(2)
	}
	sites, err := sitepairs.Static(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(2)
	}
	f, err := os.Open(*covered)
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(2)
	}
	cov, err := interleave.ReadSitePairs(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "table: %s: %v\n", *covered, err)
		os.Exit(2)
	}
	rs, err := sitepairs.ReadReasons(*reasons)
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(2)
	}
	if *writeRuns != "" {
		if err := keepRuns(sites, cov, rs, *runs, *writeRuns); err != nil {
			fmt.Fprintln(os.Stderr, "table:", err)
			os.Exit(2)
		}
		return
	}
	table, problems := sitepairs.Render(sites, cov, rs)
	fmt.Print(table)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// keepRuns writes to out the runs of the files in runs (comma-separated)
// that cover pairs the default run (cov) leaves open and no reason
// explains, each after a comment naming its pairs.
func keepRuns(sites []sitepairs.Site, cov map[[2]string]int, rs []*sitepairs.Reason, runs, out string) error {
	if runs == "" {
		return fmt.Errorf("-write-runs needs -runs")
	}
	first := map[[2]string][2]string{}
	for _, name := range strings.Split(runs, ",") {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		m, err := interleave.ReadSitePairRuns(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for k, v := range m {
			if _, ok := first[k]; !ok {
				first[k] = v
			}
		}
	}
	open := sitepairs.Open(sites, cov, rs)
	kept := sitepairs.SelectRuns(open, first)
	var b strings.Builder
	b.WriteString(pairRunsHeader)
	n := 0
	for _, r := range kept {
		fmt.Fprintf(&b, "# +%d\n", len(r.Pairs))
		for _, p := range r.Pairs {
			fmt.Fprintf(&b, "#   %s → %s\n", p.First.Key(), p.Then.Key())
		}
		fmt.Fprintf(&b, "%s\t%s\n", r.Scenario, r.Schedule)
		n += len(r.Pairs)
	}
	fmt.Fprintf(os.Stderr, "table: %d runs cover %d of the %d open pairs\n", len(kept), n, len(open))
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

const pairRunsHeader = `# Runs that cover pairs of access sites the default explore run leaves open
# (spec/explore-site-pairs.md), each the first run of a deeper search that
# covered them (scripts/explore-pair-runs.sh), replayed by the default run
# after the directed runs (interleave.PairRuns). Generated; do not edit.
# A line: SCENARIO<TAB>SCHEDULE, after a comment naming the pairs it covers.
`
