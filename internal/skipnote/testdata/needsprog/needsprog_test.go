// Package needsprog is a package whose test skips for a missing program,
// for skipnote's test to run with go test.
package needsprog

import (
	"errors"
	"testing"

	"github.com/tollgate/tollgate/internal/skipnote"
)

func TestNeedsIt(t *testing.T) {
	err := errors.New("no-such-program is not on PATH (install it: apt-get install no-such-program)")
	skipnote.Missing("no-such-program", err)
	skipnote.Missing("no-such-program", err) // once per binary
	t.Skip(err)
}
