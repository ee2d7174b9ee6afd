// Package active holds the number of the mutant a schema build runs (see
// package auto): 0, none, unless TOLLGATE_AUTOMUT names one. Only the
// schema copies of the mutated files import it; no committed file does.
package active

import (
	"os"
	"strconv"
)

// ID is the active mutant's number, read once when the program starts.
var ID = func() int {
	n, _ := strconv.Atoi(os.Getenv("TOLLGATE_AUTOMUT"))
	return n
}()
