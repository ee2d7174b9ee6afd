package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants/build"
)

// The mutants are not committed: a binary built from the tree as it is
// (go build, go run, go install) has the real tables only. A command that
// asks for a mutant's table makes the binary rebuild itself with the
// overlay of the mutants (internal/mutants/build) and run the new one with
// the same arguments.

// withMutants runs tollgate again, rebuilt with the mutants compiled in,
// when args ask for a mutant and this binary has none; ok is false when it
// did not (the command runs here).
func withMutants(args []string) (code int, ok bool) {
	if build.Compiled() || !needsMutants(args) {
		return 0, false
	}
	fmt.Fprintln(os.Stderr, "tollgate: building mutants from internal/mutants/patches through an overlay… (once per change of the patches or impl/; then cached)")
	root, err := build.Root()
	if err == nil {
		code, err = build.Rerun(root, "./cmd/tollgate", args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tollgate: %s needs the mutants, which are built from the source: %v\n", args[0], err)
		return 2, true
	}
	return code, true
}

// needsMutants reports whether the command line args (from the command's
// name on) asks for a mutant's table: a -mutant flag naming one (before a
// "--", after which conform's driver command has its own), the matrix of
// tollgate mutants (not its --list, --patch or --auto, which build none
// from the patches). (check --replay needs none: it checks a recorded
// history.)
func needsMutants(args []string) bool {
	if len(args) == 0 {
		return false
	}
	rest := args[1:]
	if args[0] == "mutants" {
		if len(rest) > 0 && slices.Contains([]string{"--auto", "-auto", "--patch", "-patch"}, rest[0]) {
			return false
		}
		for _, a := range before(rest) {
			if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && (name == "list" || name == "h" || name == "help") {
				return false
			}
		}
		return true
	}
	if v := flagValue(rest, "mutant"); v != "" && v != "none" {
		return true
	}
	return false
}

// before returns args up to a "--".
func before(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return args[:i]
		}
	}
	return args
}

// flagValue returns the value of the flag name (-name v, --name v,
// -name=v or --name=v) among args before a "--"; "" when absent.
func flagValue(args []string, name string) string {
	args = before(args)
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		n, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if n != name {
			continue
		}
		if hasValue {
			return v
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
