package tokenbucket

import (
	"strings"
	"testing"
)

// TestMustNotPanics: an argument error a Bound's method meets although Bind
// checked its arguments is a defect, and panics with it; it never returns
// as an answer (a refusal, a zero wait).
func TestMustNotPanics(t *testing.T) {
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "capacity") || !strings.Contains(msg, "defect") {
			t.Fatalf("panic %q, want the argument error as a defect", msg)
		}
	}()
	mustNot(check(Limits{Capacity: -1, RefillPerSecond: 1}, 1, true))
}
