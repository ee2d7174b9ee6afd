package interleave

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// Three-thread scenarios chosen by interleaving coverage. The pairs and
// triples of Systematic are shapes someone chose; a bug that needs three
// threads and a setup (a stale take, the slot recycled, a new enqueue that
// loses its row to a sweep) has no shape of theirs. So the generator draws
// candidates of that shape (Cover3Candidates: three threads of one or two
// operations of crOps each, from a prefix of crPrefixes), explores each at
// Cover3Bound while it collects the ordered pairs of access sites its runs
// produce (SitePairs), and keeps a candidate only when it covers pairs that
// neither the rest of the default run nor a candidate kept before covers:
// a greedy set cover, best gain first, ties to the earlier candidate, at
// most Cover3Max kept (SelectCover3). The kept names are committed in
// cover3.txt, written by `go test ./internal/interleave -run
// TestCover3Selection -explore.cover3=write`; Systematic ends with them.

// Cover3Seed, Cover3Count, Cover3Bound and Cover3Max fix the selection:
// the candidates' seed and number, the bound they are explored at, and
// how many may be kept.
const (
	Cover3Seed  = 42
	Cover3Count = 240
	Cover3Bound = 1
	Cover3Max   = 16
	// Cover3Steps caps a candidate's operations (steps of the scripts, a
	// compound operation counting each of its own): at bound 2 a scenario
	// of 8 took 170,000 to 1,400,000 schedules (5 to 8 minutes), one of 6
	// at most 4,353 (seconds).
	Cover3Steps = 6
)

// cover3File is the selection's output (cover3.txt): a comment header,
// then one kept scenario's name a line.
//
//go:embed cover3.txt
var cover3File string

// cover3Vocabulary is what a candidate's thread is made of: the credit
// operations of the pairs and the foreign ones.
var cover3Vocabulary = append(slices.Clone(crOps), crForeign...)

// Cover3Candidates are the candidates of the selection, in order: Count
// distinct three-thread credit scenarios drawn with Seed, none of the
// pairs' and triples' names, each thread one or two operations of at most
// three steps, at most Cover3Steps steps in all.
func Cover3Candidates() []Scenario {
	var out []Scenario
	for _, g := range cover3Candidates() {
		out = append(out, g.Scenario)
	}
	return out
}

func cover3Candidates() []generated {
	rng := rand.New(rand.NewPCG(Cover3Seed, 0x3c0fe2))
	ps := crPrefixes()
	seen := map[string]bool{}
	for _, g := range sysCredits() {
		seen[g.Name] = true
	}
	var out []generated
	for tries := 0; len(out) < Cover3Count && tries < 100*Cover3Count; tries++ {
		p := ps[rng.IntN(len(ps))]
		ops := make([]string, 3)
		total := 0
		for t := range ops {
			for {
				var parts []string
				steps := 0
				for k := 1 + rng.IntN(2); k > 0; k-- {
					op := cover3Vocabulary[rng.IntN(len(cover3Vocabulary))]
					parts = append(parts, op)
					steps += len(crOp(op, p, t, steps))
				}
				if steps <= 3 {
					ops[t] = strings.Join(parts, "+")
					total += steps
					break
				}
			}
		}
		g := crGenerated(p, ops...)
		if total <= Cover3Steps && !seen[g.Name] {
			seen[g.Name] = true
			out = append(out, g)
		}
	}
	return out
}

// cover3 is the kept scenarios of cover3.txt, made from their names.
var cover3 = sync.OnceValue(func() []generated {
	gs, err := parseCover3(cover3File)
	if err != nil {
		panic("explore: internal/interleave/cover3.txt: " + err.Error())
	}
	return gs
})

// parseCover3 makes the scenarios a cover3.txt names.
func parseCover3(text string) ([]generated, error) {
	var out []generated
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		g, err := crNamed(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// crNamed makes the generated credit scenario a name sys-cr-PREFIX-OP-…
// describes.
func crNamed(name string) (g generated, err error) {
	rest, ok := strings.CutPrefix(name, "sys-cr-")
	parts := strings.Split(rest, "-")
	if !ok || len(parts) < 3 {
		return g, fmt.Errorf("%q is not sys-cr-PREFIX-OP-OP…", name)
	}
	i := slices.IndexFunc(crPrefixes(), func(p crPrefix) bool { return p.name == parts[0] })
	if i < 0 {
		return g, fmt.Errorf("%q: no prefix %q", name, parts[0])
	}
	for _, op := range parts[1:] {
		for _, part := range strings.Split(op, "+") {
			if !slices.Contains(cover3Vocabulary, part) {
				return g, fmt.Errorf("%q: no operation %q", name, part)
			}
		}
	}
	return crGenerated(crPrefixes()[i], parts[1:]...), nil
}

// A Cover3Choice is one kept candidate and the pairs it added.
type Cover3Choice struct {
	Name string
	Gain int
}

// SelectCover3 is the greedy set cover: covered holds the pairs already
// covered (it is not changed), cands the candidates with the pairs each
// covers. It keeps, while one adds a pair and fewer than max are kept, the
// candidate that adds the most (the earlier on a tie).
func SelectCover3(covered map[string]bool, cands []string, pairs []map[string]bool, max int) []Cover3Choice {
	have := map[string]bool{}
	for k := range covered {
		have[k] = true
	}
	used := make([]bool, len(cands))
	var out []Cover3Choice
	for len(out) < max {
		best, gain := -1, 0
		for i := range cands {
			if used[i] {
				continue
			}
			g := 0
			for k := range pairs[i] {
				if !have[k] {
					g++
				}
			}
			if g > gain {
				best, gain = i, g
			}
		}
		if best < 0 {
			break
		}
		used[best] = true
		for k := range pairs[best] {
			have[k] = true
		}
		out = append(out, Cover3Choice{cands[best], gain})
	}
	return out
}

// PairKeys is the covered pairs of a collector as keys of a set,
// "file:line>file:line".
func PairKeys(sp *SitePairs) map[string]bool {
	out := map[string]bool{}
	for _, p := range sp.Pairs() {
		out[fmt.Sprintf("%s:%d>%s:%d", p.First.File, p.First.Line, p.Then.File, p.Then.Line)] = true
	}
	return out
}
