package interleave

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// crRecyclePairs are the ordered site pairs of the credit table's row
// word, box and flag that only the families of generate_cr_recycle.go
// cover in the default run (spec/explore-site-pairs.md): each site the
// function and the trimmed text of its line in the explored copy.
var crRecyclePairs = []string{
	"Reserve: lo := s.word.LoadLo() → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"Reserve: if hi := s.word.LoadHi(); hi == h.Serial() { → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"Reserve: if hi := s.word.LoadHi(); hi == h.Serial() { → Finish: if s.word.CompareAndSwapLo(lo, pack(gen, stFree)) {",
	"Reserve: won = s.word.CompareAndSwapLo(lo, next) → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"Reserve: won = s.word.CompareAndSwapLo(lo, next) → enqueueOutcome: lo := s.word.LoadLo()",
	"Reserve: won = s.word.CompareAndSwapLo(lo, next) → AppendEnqueued: if s.word.LoadLo() != lo {",
	"exhausted: if seen[n-1] = t.slots[n-1].word.LoadLo(); stateOf(seen[n-1]) == stFree { → Reserve: won = s.word.CompareAndSwapLo(lo, next)",
	"exhausted: if seen[n-1] = t.slots[n-1].word.LoadLo(); stateOf(seen[n-1]) == stFree { → Reserve: won = s.word.CompareAndSwap(lo, hi, next, h.Serial())",
	"exhausted: if seen[n-1] = t.slots[n-1].word.LoadLo(); stateOf(seen[n-1]) == stFree { → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"exhausted: if seen[n-1] = t.slots[n-1].word.LoadLo(); stateOf(seen[n-1]) == stFree { → Take: if s.word.CompareAndSwapLo(lo, pack(gen, stProcessing)) {",
	"exhausted: if t.slots[n-1].word.LoadLo() != seen[n-1] { → Reserve: won = s.word.CompareAndSwapLo(lo, next)",
	"exhausted: if t.slots[n-1].word.LoadLo() != seen[n-1] { → Reserve: won = s.word.CompareAndSwap(lo, hi, next, h.Serial())",
	"exhausted: if t.slots[n-1].word.LoadLo() != seen[n-1] { → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"exhausted: if t.slots[n-1].word.LoadLo() != seen[n-1] { → Take: if s.word.CompareAndSwapLo(lo, pack(gen, stProcessing)) {",
	"EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) → Reserve: if hi := s.word.LoadHi(); hi == h.Serial() {",
	"EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) → Reserve: won = s.word.CompareAndSwapLo(lo, next)",
	"EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) → Reserve: won = s.word.CompareAndSwap(lo, hi, next, h.Serial())",
	"EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) → exhausted: if seen[n-1] = t.slots[n-1].word.LoadLo(); stateOf(seen[n-1]) == stFree {",
	"EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) → exhausted: if t.slots[n-1].word.LoadLo() != seen[n-1] {",
	"EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) → EnqueueAt: lo, hi := s.word.LoadLo(), s.word.LoadHi()",
	"EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued)) → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"enqueueOutcome: lo := s.word.LoadLo() → Reserve: won = s.word.CompareAndSwapLo(lo, next)",
	"enqueueOutcome: lo := s.word.LoadLo() → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"enqueueOutcome: lo := s.word.LoadLo() → Sweep: if s.word.CompareAndSwapLo(lo, pack(genOf(lo), stFree)) {",
	"Take: if s.word.CompareAndSwapLo(lo, pack(gen, stProcessing)) { → exhausted: if seen[n-1] = t.slots[n-1].word.LoadLo(); stateOf(seen[n-1]) == stFree {",
	"Take: if s.word.CompareAndSwapLo(lo, pack(gen, stProcessing)) { → exhausted: if t.slots[n-1].word.LoadLo() != seen[n-1] {",
	"Release: if s.word.CompareAndSwapLo(lo, pack(gen, stFree)) { → AppendEnqueued: if s.word.LoadLo() != lo {",
	"Sweep: hi := s.word.LoadHi() → Reserve: won = s.word.CompareAndSwapLo(lo, next)",
	"Sweep: if s.word.CompareAndSwapLo(lo, pack(genOf(lo), stFree)) { → AppendEnqueued: if s.word.LoadLo() != lo {",
	"AppendEnqueued: if s.word.LoadLo() != lo { → Reserve: won = s.word.CompareAndSwapLo(lo, next)",
	"AppendEnqueued: if s.word.LoadLo() != lo { → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"AppendEnqueued: if s.word.LoadLo() != lo { → Release: if s.word.CompareAndSwapLo(lo, pack(gen, stFree)) {",
	"AppendEnqueued: if s.word.LoadLo() != lo { → Sweep: if s.word.CompareAndSwapLo(lo, pack(genOf(lo), stFree)) {",
	"Snapshot: switch stateOf(t.slots[n-1].word.LoadLo()) { → EnqueueAt: s.word.CompareAndSwapLo(lo, pack(gen, stEnqueued))",
	"Finish: if b := s.box.Load(); b != nil && (*seam.PlainLoad(&b.gen)) == gen { → Finish: s.box.CompareAndSwap(b, nil)",
	"Finish: s.box.CompareAndSwap(b, nil) → Finish: if b := s.box.Load(); b != nil && (*seam.PlainLoad(&b.gen)) == gen {",
	"Finish: s.box.CompareAndSwap(b, nil) → Finish: s.box.CompareAndSwap(b, nil)",
}

// TestRecycleFamilies: every scenario of sysCrRecycle is in Systematic,
// and the default run's table records each pair of crRecyclePairs covered
// (the helping enqueue's compare-and-swap told from the enqueue's own by
// its line: the helper's stands alone, without if); with -long, they pass
// on the real code at bound 2 and together cover each pair
// (familiesCover).
func TestRecycleFamilies(t *testing.T) {
	familiesCover(t, sysCrRecycle(), "explored/credits", func(fn string) string {
		return fn[strings.LastIndex(fn, ".")+1:]
	}, crRecyclePairs)
}

// familiesCover checks that every scenario of fams is in Systematic, and
// that the committed table of the default run's site pairs
// (spec/explore-site-pairs.md) records each pair of want covered: each
// site named by name (of its function's full name) and the trimmed text
// of its line, the first site in a file whose path holds dir. CI's
// explore step runs every scenario of Systematic at bound 2 on the real
// code and fails when the pairs it covers are not the table's
// (scripts/explore-code-coverage.sh), so a family that stops covering one
// of these pairs, which only the families cover, or stops passing, fails
// there. With -long (and not under -race, where it takes minutes), this
// test explores the families at bound 2 too and checks that they pass and
// together cover want: seconds of CPU that `go test ./...` would spend
// again on what CI's explore step checks.
func familiesCover(t *testing.T, fams []generated, dir string, name func(fn string) string, want []string) {
	t.Helper()
	sys := map[string]bool{}
	for _, s := range Systematic() {
		sys[s.Name] = true
	}
	for _, g := range fams {
		if !sys[g.Name] {
			t.Errorf("%s is not in Systematic", g.Name)
		}
	}
	recordedCovered(t, want)
	if !*long || raceEnabled {
		return
	}
	sp := NewSitePairs()
	for _, g := range fams {
		r := Explore(g.Scenario, Options{Bound: 2, SitePairs: sp})
		if r.Err != nil || r.Failure != nil || !r.Exhaustive {
			t.Fatalf("%s: %s", g.Name, r.Summary())
		}
	}
	files := map[string][]string{}
	site := func(s Site) string {
		lines, ok := files[s.File]
		if !ok {
			src, err := os.ReadFile(s.File)
			if err != nil {
				t.Fatal(err)
			}
			lines = strings.Split(string(src), "\n")
			files[s.File] = lines
		}
		return name(s.Func) + ": " + strings.TrimSpace(lines[s.Line-1])
	}
	covered := map[string]bool{}
	for _, p := range sp.Pairs() {
		if strings.Contains(p.First.File, dir) {
			covered[site(p.First)+" → "+site(p.Then)] = true
		}
	}
	for _, w := range want {
		if !covered[w] {
			t.Errorf("not covered: %s", w)
		}
	}
}

// sitePairsFile is the committed table of the site pairs the default
// explore run covers.
const sitePairsFile = "../../spec/explore-site-pairs.md"

// recordedCovered checks that sitePairsFile lists none of the pairs of
// want among those the default run does not cover: each of its lists of
// pairs not covered names a pair "- FIRST → THEN: why", each site its
// function's name (after the package and receiver, which want leaves out
// for the credit table) and the trimmed text of its line.
func recordedCovered(t *testing.T, want []string) {
	t.Helper()
	data, err := os.ReadFile(sitePairsFile)
	if err != nil {
		t.Fatal(err)
	}
	var notCovered []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "- ") {
			notCovered = append(notCovered, line)
		}
	}
	if len(notCovered) == 0 {
		t.Fatalf("%s lists no pair not covered: its format changed, and this test must follow it", sitePairsFile)
	}
	for _, w := range want {
		first, then, ok := strings.Cut(w, " → ")
		if !ok {
			t.Fatalf("%q: not FIRST → THEN", w)
		}
		re := regexp.MustCompile(`^- (?:[^→]*[ .])?` + regexp.QuoteMeta(first) + ` → (?:[^→]*[ .])?` + regexp.QuoteMeta(then) + `: `)
		for _, line := range notCovered {
			if re.MatchString(line) {
				t.Errorf("%s records a pair of the families not covered: %s", sitePairsFile, line)
			}
		}
	}
}
