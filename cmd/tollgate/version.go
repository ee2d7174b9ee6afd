package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

func init() {
	register(command{
		name:    "version",
		summary: "print the module version, VCS revision and Go version this binary was built from",
		run:     func(args []string) int { return runVersion(args, os.Stdout, os.Stderr) },
	})
}

// runVersion is `tollgate version`: what debug.ReadBuildInfo says of the
// running binary.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: tollgate version [flags]

Prints the version of the module github.com/tollgate/tollgate this binary was
built from ("(devel)" for a build from a checkout), the VCS revision, its time
and whether the tree had uncommitted changes (when the build recorded them:
go build does in a git checkout unless -buildvcs=false; go run does not), and
the Go version.

flags:
`)
		fs.PrintDefaults()
		helpTail(stderr, "version")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tollgate version: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(stderr, "tollgate version: the binary holds no build information")
		return 1
	}
	fmt.Fprint(stdout, versionText(bi))
	return 0
}

// versionText is the report of build information bi.
func versionText(bi *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	rev := "unknown (not recorded: a go run, or a build with -buildvcs=false)"
	if r, ok := settings["vcs.revision"]; ok {
		rev = r
		if t := settings["vcs.time"]; t != "" {
			rev += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			rev += ", with uncommitted changes"
		}
	}
	return fmt.Sprintf("tollgate %s\nmodule %s\nrevision %s\n%s\n", bi.Main.Version, bi.Main.Path, rev, bi.GoVersion)
}
