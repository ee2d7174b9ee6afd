// Command tollgate runs tollgate's checks from the command line.
//
//	tollgate <command> [flags]
//
// Each command lives in its own file and registers itself with register.
package main

import (
	"fmt"
	"os"
	"sort"
)

type command struct {
	name    string
	summary string
	run     func(args []string) int // exit code
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("tollgate: command " + c.name + " registered twice")
	}
	commands[c.name] = c
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: tollgate <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'tollgate <command> -h' for a command's flags, examples and exit codes.")
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	if a := os.Args[1]; a == "-h" || a == "-help" || a == "--help" || a == "help" {
		usage()
		os.Exit(0)
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "tollgate: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if code, ok := withMutants(os.Args[1:]); ok { // rebuild.go
		os.Exit(code)
	}
	os.Exit(c.run(os.Args[2:]))
}
