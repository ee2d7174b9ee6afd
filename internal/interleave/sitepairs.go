package interleave

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Interleaving coverage (spec/explore.md §10, "Interleaving coverage"). Code coverage says which
// lines of the tables some explored run reached; it cannot say which
// orders of two threads' accesses to one word some run produced, and a
// concurrency bug lives in an order. SitePairs measures the orders: in
// every explored run, for every word (an atomic word by its address, plain
// memory by its 8-byte granule, as the race detector shadows it), it notes
// each dependence between two threads: thread u accesses the word at site
// b after thread t ≠ u accessed it at site a, one of the two a write, and
// no write came between them. The ordered pair (a, b) is then covered:
// some run ran the two accesses in that order, on two threads. The static pairs of the tables (two sites that can touch one
// word, one of them a write) are read from the source by
// internal/interleave/sitepairs; what no run covers is a hole, listed with
// the reason it cannot be covered or left open.

// SitePairs collects the covered pairs of every run explored with it
// (Options.SitePairs). Collecting records every operation's call site
// (internal/seam/hooked's pcAbove: the default run takes half as long
// again as without it), so it is a measurement, not part of a verdict.
// It is safe for concurrent use.
type SitePairs struct {
	mu    sync.Mutex
	pairs map[[2]uintptr]int // (first site, then site) → runs that covered it
	// first, when runs are kept (KeepRuns), is the run that first covered
	// each pair: its scenario's name and its schedule.
	first map[[2]uintptr][2]string
}

// NewSitePairs returns an empty collector.
func NewSitePairs() *SitePairs { return &SitePairs{pairs: map[[2]uintptr]int{}} }

// KeepRuns makes s remember, for every pair, the scenario and the schedule
// of the first run that covered it (SitePair.Scenario, SitePair.Schedule):
// a run to replay for that pair alone. Call it before any exploration
// collects into s; it costs the encoding of every run's schedule.
func (s *SitePairs) KeepRuns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = map[[2]uintptr][2]string{}
	}
}

// A Site is a call site of the code under test.
type Site struct {
	Func string // package-qualified function ("credits.(*Table).Reserve")
	File string // absolute path of the source file
	Line int
}

// A SitePair is a covered pair: an access at First, then, after a switch
// of threads, an access of the same word at Then, one of them a write.
type SitePair struct {
	First, Then Site
	Runs        int // how many runs produced it
	// Scenario and Schedule are the first run that produced it, when the
	// collector kept runs (KeepRuns).
	Scenario, Schedule string
}

// Pairs returns the covered pairs, sorted by file, line and function.
func (s *SitePairs) Pairs() []SitePair {
	s.mu.Lock()
	defer s.mu.Unlock()
	sites := map[uintptr]Site{}
	site := func(pc uintptr) Site {
		if v, ok := sites[pc]; ok {
			return v
		}
		f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
		v := Site{Func: f.Function, File: f.File, Line: f.Line}
		sites[pc] = v
		return v
	}
	var out []SitePair
	seen := map[[2]Site]int{}
	for k, n := range s.pairs {
		key := [2]Site{site(k[0]), site(k[1])}
		run := s.first[k]
		if i, ok := seen[key]; ok {
			out[i].Runs += n
			// Two call sites of one line: keep one run, the same whatever
			// the map's order.
			if r := &out[i]; run[0] < r.Scenario || run[0] == r.Scenario && run[1] < r.Schedule {
				r.Scenario, r.Schedule = run[0], run[1]
			}
			continue
		}
		seen[key] = len(out)
		out = append(out, SitePair{First: key[0], Then: key[1], Runs: n, Scenario: run[0], Schedule: run[1]})
	}
	less := func(a, b Site) int {
		switch {
		case a.File != b.File:
			return cmpString(a.File, b.File)
		case a.Line != b.Line:
			return a.Line - b.Line
		}
		return cmpString(a.Func, b.Func)
	}
	sort.Slice(out, func(i, j int) bool {
		if c := less(out[i].First, out[j].First); c != 0 {
			return c < 0
		}
		return less(out[i].Then, out[j].Then) < 0
	})
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pairTracker is one controller's view of the current run: for every
// word, its last write and the reads since.
type pairTracker struct {
	into  *SitePairs
	words map[uintptr]*wordHistory
	run   map[[2]uintptr]bool // the pairs of the current run
	// keep: the collector keeps runs (KeepRuns); then scenario is the
	// explored scenario's name and sched the current run's schedule, set
	// when the run ends (execute).
	keep            bool
	scenario, sched string
}

type wordHistory struct {
	write   siteAccess // the last write (site 0: none yet)
	readers []siteAccess
}

type siteAccess struct {
	thread int
	site   uintptr
}

func newPairTracker(into *SitePairs, scenario string) *pairTracker {
	into.mu.Lock()
	keep := into.first != nil
	into.mu.Unlock()
	return &pairTracker{into: into, words: map[uintptr]*wordHistory{}, run: map[[2]uintptr]bool{},
		keep: keep, scenario: scenario}
}

// trackPairs makes c collect the site pairs of its runs into sp, as
// scenario's, with every operation's call site recorded; the function it
// returns folds the last run in and stops recording.
func (c *controller) trackPairs(sp *SitePairs, scenario string) func() {
	c.pairs = newPairTracker(sp, scenario)
	hooked.SetSites(true)
	return func() {
		hooked.SetSites(false)
		c.pairs.flush()
	}
}

// begin starts a run: what the last one did is folded into the collector.
func (p *pairTracker) begin() {
	p.flush()
	clear(p.words)
}

// flush adds the current run's pairs to the collector.
func (p *pairTracker) flush() {
	if len(p.run) == 0 {
		return
	}
	p.into.mu.Lock()
	for k := range p.run {
		p.into.pairs[k]++
		if _, ok := p.into.first[k]; p.keep && !ok {
			p.into.first[k] = [2]string{p.scenario, p.sched}
		}
	}
	p.into.mu.Unlock()
	clear(p.run)
}

// note records an access of the word at addr by thread t at site. The
// pairs are the run's dependences between threads: a write, then a read
// or write of another thread (it reads or overwrites what the write
// left), and a read, then a write of another thread (it overwrites what
// the read saw). These are the orders the reduction keeps (spec/explore.md
// §5): two runs it treats as one order these pairs alike, so a pair is
// covered whichever of them it explores.
func (p *pairTracker) note(addr uintptr, t int, site uintptr, write bool) {
	if site == 0 {
		return
	}
	h := p.words[addr]
	if h == nil {
		h = &wordHistory{}
		p.words[addr] = h
	}
	if h.write.site != 0 && h.write.thread != t {
		p.run[[2]uintptr{h.write.site, site}] = true
	}
	if !write {
		for _, r := range h.readers {
			if r.thread == t && r.site == site {
				return
			}
		}
		h.readers = append(h.readers, siteAccess{t, site})
		return
	}
	for _, r := range h.readers {
		if r.thread != t {
			p.run[[2]uintptr{r.site, site}] = true
		}
	}
	h.readers = h.readers[:0]
	h.write = siteAccess{t, site}
}

// atomic notes a seam operation of the running thread: the synchronization
// operations of mutexes and wait groups and the clock are not words of the
// tables, and a plain store is noted as the plain access it also is.
func (p *pairTracker) atomic(t int, a hooked.Access) {
	switch a.Op {
	case hooked.Lock, hooked.Unlock, hooked.RLock, hooked.RUnlock, hooked.Wait, hooked.Now, hooked.Tick:
		return
	case hooked.Plain:
		return // a plain store is also reported as plain memory (plain)
	}
	p.note(uintptr(a.Word), t, a.Site, a.Wrote())
}

// plain notes a plain access of size bytes at addr, granule by granule.
func (p *pairTracker) plain(t int, addr unsafe.Pointer, size uintptr, write bool, site uintptr) {
	start := uintptr(addr) &^ 7
	end := uintptr(addr) + max(size, 1)
	for g := start; g < end; g += 8 {
		p.note(g, t, site, write)
	}
}

// WriteSitePairs writes pairs a line each, "file:line<TAB>file:line<TAB>runs"
// (internal/interleave/sitepairs reads it), each file as a slash path
// relative to root when it lies under root.
func WriteSitePairs(w io.Writer, pairs []SitePair, root string) error {
	bw := bufio.NewWriter(w)
	for _, p := range pairs {
		fmt.Fprintf(bw, "%s\t%s\t%d\n", relSite(p.First, root), relSite(p.Then, root), p.Runs)
	}
	return bw.Flush()
}

// relSite is s as "file:line", the file a slash path relative to root when
// it lies under root.
func relSite(s Site, root string) string {
	f := s.File
	if r, err := filepath.Rel(root, f); err == nil && filepath.IsLocal(r) {
		f = r
	}
	return filepath.ToSlash(f) + ":" + strconv.Itoa(s.Line)
}

// WriteSitePairRuns writes, for every pair of a collector that kept runs
// (KeepRuns), the first run that covered it, a line each:
// "file:line<TAB>file:line<TAB>scenario<TAB>schedule", the files as
// WriteSitePairs writes them. `tollgate explore -site-pair-runs` writes it;
// replaying a line's schedule of its scenario covers its pair.
func WriteSitePairRuns(w io.Writer, pairs []SitePair, root string) error {
	bw := bufio.NewWriter(w)
	for _, p := range pairs {
		if p.Schedule != "" {
			fmt.Fprintf(bw, "%s\t%s\t%s\t%s\n", relSite(p.First, root), relSite(p.Then, root), p.Scenario, p.Schedule)
		}
	}
	return bw.Flush()
}

// ReadSitePairRuns reads what WriteSitePairRuns wrote: for each pair, by
// its two "file:line" sites, the scenario and schedule of its first run.
// A pair on several lines keeps its first.
func ReadSitePairRuns(r io.Reader) (map[[2]string][2]string, error) {
	out := map[[2]string][2]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 || f[2] == "" || f[3] == "" {
			return nil, fmt.Errorf("line %d: want file:line, file:line, scenario and schedule separated by tabs", n)
		}
		k := [2]string{f[0], f[1]}
		if _, ok := out[k]; !ok {
			out[k] = [2]string{f[2], f[3]}
		}
	}
	return out, sc.Err()
}

// ReadSitePairs reads what WriteSitePairs wrote (tollgate explore
// -site-pairs): a line per covered pair, "file:line<TAB>file:line<TAB>runs".
// A pair on several lines (written by several processes, or by two
// functions on one line) has the sum of their runs.
func ReadSitePairs(r io.Reader) (map[[2]string]int, error) {
	out := map[[2]string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want file:line, file:line and runs separated by tabs", n)
		}
		runs, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: runs: %w", n, err)
		}
		out[[2]string{f[0], f[1]}] += runs
	}
	return out, sc.Err()
}
