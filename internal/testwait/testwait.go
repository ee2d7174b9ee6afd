// Package testwait lets a package whose parallel tests mostly wait (on
// servers, faults, timeouts, child processes) run more of them at once.
// It imports nothing of this module; a package's TestMain calls it.
package testwait

import (
	"flag"
	"strconv"
)

// Parallel makes n the number of parallel tests that run at once
// (-test.parallel) unless the command line sets it. go test's default is
// GOMAXPROCS, which on 2 cores leaves one test waiting out a fault while
// a second waits for a server and the rest wait for them. It parses the
// command line (flag.Parse), so call it first in TestMain, after m is
// made. It panics when n is below 1 or the test flags are not registered.
func Parallel(n int) {
	if n < 1 {
		panic("testwait: Parallel(" + strconv.Itoa(n) + "): n must be at least 1")
	}
	if flag.Lookup("test.parallel") == nil {
		panic("testwait: Parallel called where no test flags are registered (call it from TestMain)")
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic("testwait: " + err.Error())
		}
	}
}
