package interleave

import (
	"fmt"
	"testing"

	exploredtokenbucket "github.com/tollgate/tollgate/internal/mutants/explored/tokenbucket"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// rereadProgram explores Take (the table's clock) racing TakeAt on one key
// of the real table, with a virtual clock that reads 100 ms plus 10 ms per
// commit to a bucket word so far: a reading is stale exactly when a commit
// came after it. Take promises that a lost race never commits a stale
// reading (spec/tokenbucket.md §6, pragmatica#1315): after each failed
// compare-and-swap it reads the clock again. T4 keeps a stale reading
// safe, so no history shows it; the check is on the readings themselves.
type rereadProgram struct {
	words   *words
	commits int64
	lostAt  int64 // the clock at T0's last failed commit; -1: none
	lastRd  int64 // T0's last clock reading
	lost    int   // runs in which T0 lost a race
	rem     float64
	ok      bool
}

func (p *rereadProgram) threads() int { return 2 }

func (p *rereadProgram) now() int64 { return 100 + 10*p.commits }

func (p *rereadProgram) begin(c *controller) []func() {
	p.commits, p.lostAt, p.lastRd = 0, -1, -1
	tab := exploredtokenbucket.New[string](exploredtokenbucket.WithClock(func() int64 {
		p.lastRd = p.now() // only T0's Take reads it
		return p.lastRd
	}))
	lay := tableLayout(tab)
	if p.words == nil {
		p.words = newWords(lay)
		p.words.keys = []string{"k"}
		p.words.hash = pinnedHash(nil, []string{"k"}, nil)
	}
	p.words.reset(lay)
	p.words.addTrie(p.words.trie.Trie(), "trie0")
	lim := exploredtokenbucket.Limits{Capacity: 1000, RefillPerSecond: 1000}
	// Setup, before any switch: empty the bucket at 0 ms.
	c.operation(liveNone, func() { tab.TakeAt(0, "k", lim, 1000) })
	p.commits = 0
	c.onAccess = func(a hooked.Access) {
		if _, bucket := a.New.([2]uint64); !bucket || a.Op != hooked.CAS {
			return // only bucket words are 128-bit pairs here
		}
		switch {
		case a.OK:
			p.commits++
		case c.cur != nil && c.cur.id == 0:
			p.lostAt = p.now()
		}
	}
	return []func(){
		func() { c.operation(liveNone, func() { p.rem, p.ok, _ = tab.Take("k", lim, 1) }) },
		func() { c.operation(liveNone, func() { tab.TakeAt(100, "k", lim, 1) }) },
	}
}

func (p *rereadProgram) end(c *controller, outcome bool) (*Failure, string) {
	var f *Failure
	if p.lostAt >= 0 {
		p.lost++
		if p.lastRd < p.lostAt {
			f = &Failure{Kind: KindInvariant, Thread: 0, Detail: fmt.Sprintf(
				"Take lost a race when the clock read %d ms and committed with its reading of %d ms, taken before: a stale reading (remaining %v)",
				p.lostAt, p.lastRd, p.rem)}
		}
	}
	if !p.ok && f == nil {
		f = &Failure{Kind: KindInvariant, Thread: 0, Detail: "Take was refused: the bucket refills 100 tokens by 100 ms"}
	}
	if !outcome {
		return f, ""
	}
	return f, fmt.Sprintf("T0 remaining %v, last reading %d, lost at %d", p.rem, p.lastRd, p.lostAt)
}

func (p *rereadProgram) tracer() tracer { return nil }

// TestTakeRereadsAfterLostRace explores every schedule of the race within 2
// preemptions: whenever Take lost its compare-and-swap, the reading it
// committed with was taken after that loss. The search must reach a lost
// race, or it checked nothing.
func TestTakeRereadsAfterLostRace(t *testing.T) {
	p := &rereadProgram{}
	res := exploreProgram(p, "take-rereads-after-lost-race", Options{Bound: 2})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Failure != nil {
		t.Fatalf("%s\n%s", res.Summary(), res.Failure.Report())
	}
	if p.lost == 0 {
		t.Fatalf("%s, but Take never lost a race: nothing was checked", res.Summary())
	}
	t.Logf("%s; Take lost a race in %d runs", res.Summary(), p.lost)
}
