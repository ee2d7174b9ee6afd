package tokenbucket_test

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// TestWithClockNilPanics: a nil clock is refused where it is passed, with a
// message naming it, not by a nil call in the first Take.
func TestWithClockNilPanics(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "WithClock(nil)") || !strings.Contains(msg, "defect") {
			t.Fatalf("panic %q, want one naming WithClock(nil) as a defect", msg)
		}
	}()
	tokenbucket.New[string](tokenbucket.WithClock(nil))
}
