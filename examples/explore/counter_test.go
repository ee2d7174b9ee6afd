package counter

import (
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

// tickets is the Spec: two threads take tickets; the model hands them out
// in order.
func tickets(racy bool) explore.Spec[*Tickets, string, int64, int64] {
	return explore.Spec[*Tickets, string, int64, int64]{
		New:     func() *Tickets { return &Tickets{Racy: racy} },
		Threads: [][]string{{"next", "next"}, {"next"}},
		Call:    func(t *Tickets, _ string) int64 { return t.Next() },
		Step:    func(last int64, _ time.Time, _ string) (int64, int64) { return last + 1, last + 1 },
	}
}

func TestTickets(t *testing.T) { explore.Check(t, tickets(false)) }

// TestRacyTicketsFail shows what a failure looks like (run it with
// tollgate explore -pkg . -run TestRacyTicketsFail -v): the load-then-store
// counter hands out one ticket twice.
func TestRacyTicketsFail(t *testing.T) {
	if !rt.IsRewritten("example.com/explore") {
		t.Fatal("example.com/explore is not rewritten: run tollgate explore -pkg . (under plain go test its atomics are no switch points)")
	}
	r := explore.Explore(tickets(true), explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("the racy counter passed: %s", r.Summary())
	}
	t.Logf("found, as it should be:\n%s", r.Failure.Report)
}
