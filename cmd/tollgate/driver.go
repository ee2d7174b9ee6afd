package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/internal/fault"
)

func init() {
	register(command{
		name:    "driver",
		summary: "serve the Go implementation over the conformance protocol on stdin/stdout (spec/protocol.md)",
		run:     runDriver,
	})
}

func runDriver(args []string) int {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	mutant := fs.String("mutant", "", "serve a deliberately broken implementation (a fault name, see internal/fault)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	var faults fault.Fault
	if *mutant != "" {
		f, err := fault.Parse(*mutant)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tollgate driver:", err)
			return 2
		}
		faults = f
		fmt.Fprintf(os.Stderr, "tollgate driver: serving mutant %s\n", f)
	}
	if err := conform.ServeGo(os.Stdin, os.Stdout, os.Stderr, faults); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate driver:", err)
		return 1
	}
	return 0
}
