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

// TestZeroTablePanics: every method of a zero Table panics at its call with
// a message naming the mistake, instead of dereferencing nil in a walk.
func TestZeroTablePanics(t *testing.T) {
	lim := tokenbucket.Limits{Capacity: 5, RefillPerSecond: 1}
	for name, call := range map[string]func(tb *tokenbucket.Table[string]){
		"Take":         func(tb *tokenbucket.Table[string]) { _, _, _ = tb.Take("k", lim, 1) },
		"TakeAt":       func(tb *tokenbucket.Table[string]) { _, _, _ = tb.TakeAt(1, "k", lim, 1) },
		"Admit":        func(tb *tokenbucket.Table[string]) { _, _ = tb.Admit("k", lim, 1) },
		"AdmitAt":      func(tb *tokenbucket.Table[string]) { _, _ = tb.AdmitAt(1, "k", lim, 1) },
		"PeekAt":       func(tb *tokenbucket.Table[string]) { _, _ = tb.PeekAt(1, "k", lim) },
		"RetryAfterAt": func(tb *tokenbucket.Table[string]) { _, _ = tb.RetryAfterAt(1, "k", lim, 1) },
		"Reset":        func(tb *tokenbucket.Table[string]) { tb.Reset("k") },
		"ReclaimAt":    func(tb *tokenbucket.Table[string]) { _, _ = tb.ReclaimAt(1, lim) },
		"Now":          func(tb *tokenbucket.Table[string]) { tb.Now() },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "zero Table is not usable") {
					t.Fatalf("%s on a zero Table: panic %q, want one naming the zero Table", name, msg)
				}
			}()
			call(new(tokenbucket.Table[string]))
		})
	}
}
