package explore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tollgate/tollgate/explore"
	tatomic "github.com/tollgate/tollgate/explore/atomic"
)

// seats hands out numbered seats. Its Take reads the last seat and then
// stores the next: two callers can take the same seat. (Code written
// against the twins directly; ordinary code is rewritten onto them by
// tollgate explore -pkg.)
type seats struct{ last tatomic.Int64 }

func (s *seats) Take() int64 {
	n := s.last.Load() + 1
	s.last.Store(n)
	return n
}

// Explore finds the lost update at one preemption, and the schedule it
// prints replays it.
func ExampleExplore() {
	spec := explore.Spec[*seats, string, int64, int64]{
		New:     func() *seats { return new(seats) },
		Threads: [][]string{{"take"}, {"take"}},
		Call:    func(s *seats, _ string) int64 { return s.Take() },
		Step:    func(last int64, _ time.Time, _ string) (int64, int64) { return last + 1, last + 1 },
		Twins:   true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	// The failure's visualization is kept for a person to open, in a new
	// directory under $TMPDIR (Options.Dir chooses another).
	if r.Failure.HTML != "" {
		defer os.RemoveAll(filepath.Dir(r.Failure.HTML))
	}
	fmt.Println(r.Failure.Kind, "at", r.Failure.Preemptions, "preemption:", r.Failure.Schedule)
	_, again, _ := explore.Replay(spec, r.Failure.Schedule, "")
	fmt.Println("replayed:", again.Kind)
	// Output:
	// linearizability at 1 preemption: 0x2.1x3.0x1
	// replayed: linearizability
}
