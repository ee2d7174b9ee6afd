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

	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/interleave/sitepairs"
)

func main() {
	covered := flag.String("covered", "", "the file tollgate explore -site-pairs wrote")
	reasons := flag.String("reasons", "internal/interleave/sitepairs/testdata/reasons.txt", "the reasons pairs are not covered")
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
	table, problems := sitepairs.Render(sites, cov, rs)
	fmt.Print(table)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}
