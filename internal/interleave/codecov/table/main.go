// Command table renders the code-coverage table of the default explore run
// (package codecov) from a text coverage profile, and exits 1 when a block
// the run did not reach has no reason, or a reason names no such block.
// scripts/explore-code-coverage.sh builds tollgate with -cover, runs the
// default explore, and calls it:
//
//	go run ./internal/interleave/codecov/table -profile cov.txt > spec/explore-code-coverage.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tollgate/tollgate/internal/interleave/codecov"
)

func main() {
	profile := flag.String("profile", "", "the text coverage profile (go tool covdata textfmt)")
	reasons := flag.String("reasons", "internal/interleave/codecov/testdata/unreached.txt", "the reasons file: KEY<tab>REASON a line")
	flag.Parse()
	if *profile == "" {
		fmt.Fprintln(os.Stderr, "table: -profile is required")
		os.Exit(2)
	}
	os.Exit(run(*profile, *reasons))
}

func run(profile, reasonsPath string) int {
	pf, err := os.Open(profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		return 2
	}
	defer pf.Close()
	blocks, err := codecov.Parse(pf, ".", "github.com/tollgate/tollgate", []string{"/internal/mutants/explored/"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		return 2
	}
	if len(blocks) == 0 {
		fmt.Fprintln(os.Stderr, "table: the profile has no block of internal/mutants/explored: was tollgate built with -coverpkg over it?")
		return 2
	}
	rf, err := os.Open(reasonsPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		return 2
	}
	defer rf.Close()
	reasons, err := codecov.ReadReasons(rf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		return 2
	}
	md, v := codecov.Table(blocks, reasons, "bash scripts/explore-code-coverage.sh")
	fmt.Print(md)
	for _, b := range v.Unexplained {
		fmt.Fprintf(os.Stderr, "not reached, no reason: %s:%d %s\n", b.File, b.Line, b.Key())
	}
	for _, k := range v.Stale {
		fmt.Fprintf(os.Stderr, "a reason for a block that is reached or gone: %s\n", k)
	}
	if !v.OK() {
		return 1
	}
	return 0
}
