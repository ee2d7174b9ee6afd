package interleave

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/seam/hooked"
	"github.com/tollgate/tollgate/model"
)

// shapeProbe is a token-bucket program that, at the end of each run and
// before the usual checks, asks the trie-memory check (TM1, shapeCheck)
// about the trie as the run left it and about the same trie with the head
// cell of key kill made dead in place, then restores that cell.
type shapeProbe struct {
	*tbProgram
	kill          string
	clean, broken *Failure
	found         bool
}

func (p *shapeProbe) end(c *controller, outcome bool) (*Failure, string) {
	p.clean = p.shapeCheck(p.run)
	s := p.words.trie
	root := s.Root(s.Trie())
	for j := range s.Fanout(0) {
		_, child := s.Child(root, j)
		if child == nil || p.words.isFrozen(child) || p.words.isInner(child) || s.Key(child) != p.kill {
			continue
		}
		st := (*hooked.Pair)(s.State(child))
		lo, hi := st.Load()
		st.Store(tbDeadLo, hi)
		p.broken, p.found = p.shapeCheck(p.run), true
		st.Store(lo, hi)
	}
	return p.tbProgram.end(c, outcome)
}

// TestShapeCheckSeesDeadHead: after a reclaim that overlapped nothing,
// TM1 passes the trie the real code leaves and fails the same trie with a
// dead cell heading a chain, naming the cell's key; a run whose reclaim
// overlapped another operation is not checked.
func TestShapeCheckSeesDeadHead(t *testing.T) {
	setup := []model.TBInput[string]{tbTake("k", 1, 0), tbTake("j", 1, 0)}
	for _, c := range []struct {
		name    string
		threads [][]model.TBInput[string]
		checked bool // every run ends with a solo reclaim
	}{
		// k and j are not full at 0 ms: the reclaim keeps both.
		{"solo", [][]model.TBInput[string]{{tbReclaim(0)}}, true},
		// A take races the reclaim: some runs overlap them.
		{"overlap", [][]model.TBInput[string]{{tbReclaim(0)}, {tbTake("j", 1, 0)}}, false},
	} {
		s := TokenBucketScenario("tm1-"+c.name, "a reclaim that keeps k", nil, setup, c.threads...)
		tp, err := newTBProgram(s, fault.None)
		if err != nil {
			t.Fatal(err)
		}
		p := &shapeProbe{tbProgram: tp, kill: "k"}
		var cleanFail, brokenFail, unchecked, ends int
		// Each run's two verdicts, looked at as the run ends.
		p2 := &countingProbe{shapeProbe: p, each: func() {
			ends++
			if !p.found {
				t.Fatalf("%s: no cell of k at the root", c.name)
			}
			if p.clean != nil {
				cleanFail++
			}
			switch {
			case p.broken == nil:
				unchecked++
			case p.broken.Invariant != "TM1" || !strings.Contains(p.broken.Detail, `the dead cell of "k" heads the chain`):
				t.Errorf("%s: a dead head reported as %+v", c.name, p.broken)
			default:
				brokenFail++
			}
		}}
		r := exploreProgram(p2, s.Name, Options{Strategy: DFS, Bound: 2})
		if r.Err != nil || r.Failure != nil {
			t.Fatalf("%s on the real code: %s", c.name, r.Summary())
		}
		if cleanFail > 0 {
			t.Errorf("%s: TM1 failed %d runs of the real code", c.name, cleanFail)
		}
		if c.checked && (unchecked > 0 || brokenFail == 0) {
			t.Errorf("%s: the dead head went unseen in %d of %d runs", c.name, unchecked, unchecked+brokenFail)
		}
		if !c.checked && unchecked == 0 {
			t.Errorf("%s: every run was checked, though the take overlaps the reclaim in some", c.name)
		}
		t.Logf("%s: %d runs, the dead head seen in %d", c.name, ends, brokenFail)
	}
}

// countingProbe calls each after every run's end.
type countingProbe struct {
	*shapeProbe
	each func()
}

func (p *countingProbe) end(c *controller, outcome bool) (*Failure, string) {
	f, s := p.shapeProbe.end(c, outcome)
	p.each()
	return f, s
}
