package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Result is one measured case: the median of its rounds' ns/op (the mean
// of the middle two for an even count, as benchstat has it), the median
// round's other figures (the lower middle one for an even count), and
// every round's ns/op and p99.
type Result struct {
	Case
	NsPerOp     float64
	AllocsPerOp int64
	BytesPerOp  int64
	N           int
	Extra       map[string]float64 // cpu-ns/op, p50-ns, p99-ns, clock-ns, admit/op, fair-spread, casretries/op
	Rounds      []float64          // ns/op of each round
	P99Rounds   []float64          // p99-ns of each round
	// ServerRounds is the server's own time per call of each round
	// (server-ns/op, the Redis cases), nil where the case reports none.
	ServerRounds []float64
}

// line formats one round of r as a benchmark result line that benchstat
// reads.
func (r Result) line(nsPerOp float64, n int, extra map[string]float64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "BenchmarkSuite/%s-%d\t%d\t%s ns/op", r.Name, runtime.GOMAXPROCS(0), n, fmtFloat(nsPerOp))
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&sb, "\t%s %s", fmtFloat(extra[k]), k)
	}
	fmt.Fprintf(&sb, "\t%d B/op\t%d allocs/op", r.BytesPerOp, r.AllocsPerOp)
	return sb.String()
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// Runner runs cases in process, each timed as go test -bench times a
// benchmark.
type Runner struct {
	Rounds    int             // runs of every case; the median is kept
	Benchtime time.Duration   // target time of a case per round (0: 1s, go test's default)
	Raw       io.Writer       // every round's result line, benchstat format
	Progress  func(string)    // one line per finished case
	Filter    func(Case) bool // nil runs every case
}

// Run measures cases cell by cell, a cell being the cases of one group at
// one goroutine count: it runs every design of the cell once per round,
// round after round, so the designs compared in one ratio share the
// machine's conditions of the same few seconds. Each case keeps its median
// round. A case whose run failed a check has no result; failed describes
// each failure with the command that replays it.
func (rn Runner) Run(cases []Case) (results []Result, failed []string) {
	if rn.Filter != nil {
		cases = slices.DeleteFunc(slices.Clone(cases), func(c Case) bool { return !rn.Filter(c) })
	}
	rounds := max(rn.Rounds, 1)
	type cell struct {
		group string
		g     int
	}
	var cells []cell
	members := map[cell][]int{}
	for i, c := range cases {
		k := cell{c.Group, c.G}
		if _, ok := members[k]; !ok {
			cells = append(cells, k)
		}
		members[k] = append(members[k], i)
	}
	benchtime := rn.Benchtime
	if benchtime <= 0 {
		benchtime = time.Second
	}
	all := make([][]measurement, len(cases))
	total, done := rounds*len(cases), 0
	for _, k := range cells {
		for r := range rounds {
			for _, i := range members[k] {
				c := cases[i]
				m := measure(c.Run, benchtime)
				if m.N == 0 {
					msg := m.Failure
					if msg == "" {
						msg = "the run failed"
					}
					failed = append(failed, fmt.Sprintf("%s: %s (replay: go test -run '^$' -bench 'Suite/%s$' ./bench)", c.Name, msg, c.Name))
					done++
					continue
				}
				all[i] = append(all[i], m)
				done++
				res := Result{Case: c, BytesPerOp: m.bytesPerOp(), AllocsPerOp: m.allocsPerOp()}
				if rn.Raw != nil {
					fmt.Fprintln(rn.Raw, res.line(m.nsPerOp(), m.N, m.Extra))
				}
				if rn.Progress != nil {
					rn.Progress(fmt.Sprintf("[%d/%d] round %d %s: %.1f ns/op, %.1f cpu-ns/op, p99 %.0f ns", done, total, r+1, c.Name, m.nsPerOp(), m.Extra["cpu-ns/op"], m.Extra["p99-ns"]))
				}
			}
		}
	}
	var out []Result
	for i, c := range cases {
		ms := all[i]
		if len(ms) == 0 {
			continue
		}
		order := make([]int, len(ms))
		for j := range order {
			order[j] = j
		}
		sort.Slice(order, func(a, b int) bool { return ms[order[a]].nsPerOp() < ms[order[b]].nsPerOp() })
		med := ms[order[(len(order)-1)/2]]
		res := Result{Case: c, NsPerOp: med.nsPerOp(), AllocsPerOp: med.allocsPerOp(), BytesPerOp: med.bytesPerOp(), N: med.N, Extra: med.Extra}
		for _, m := range ms {
			res.Rounds = append(res.Rounds, m.nsPerOp())
			res.P99Rounds = append(res.P99Rounds, m.Extra["p99-ns"])
			if v, ok := m.Extra["server-ns/op"]; ok {
				res.ServerRounds = append(res.ServerRounds, v)
			}
		}
		res.NsPerOp = median(res.Rounds)
		out = append(out, res)
	}
	return out, failed
}

// median is the median of xs: the middle value, or the mean of the two
// middle ones (NaN when empty).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Noise is the median, over results with two or more rounds, of the
// spread (max-min)/median of their rounds' ns/op; NaN with one round.
func Noise(rs []Result) float64 {
	var spreads []float64
	for _, r := range rs {
		if len(r.Rounds) < 2 {
			continue
		}
		lo, hi := slices.Min(r.Rounds), slices.Max(r.Rounds)
		spreads = append(spreads, (hi-lo)/r.NsPerOp)
	}
	if len(spreads) == 0 {
		return math.NaN()
	}
	slices.Sort(spreads)
	return spreads[len(spreads)/2]
}

// CPUModel is the processor's model name from /proc/cpuinfo, or GOARCH
// where that is not available.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// RawHeader is the header benchstat expects before result lines.
func RawHeader() string {
	return fmt.Sprintf("goos: %s\ngoarch: %s\npkg: github.com/tollgate/tollgate/bench\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, CPUModel())
}

// MemResult is the memory per idle key of one design.
type MemResult struct {
	Design      string
	Keys        int
	BytesPerKey float64
}

// MemLine formats m as a benchmark line benchstat reads.
func (m MemResult) MemLine() string {
	return fmt.Sprintf("BenchmarkMemoryPerKey/keys=%d/design=%s-%d\t1\t%s bytes/key", m.Keys, m.Design, runtime.GOMAXPROCS(0), fmtFloat(m.BytesPerKey))
}

// Line formats r as benchmark lines benchstat reads.
func (r ReclaimRound) Line() string {
	return fmt.Sprintf("BenchmarkMemoryReclaimed/keys=%d/round=%d-%d\t1\t%d held-bytes\t%d left-bytes\t%d reclaimed", r.Keys, r.Round, runtime.GOMAXPROCS(0), r.Held, r.Left, r.Reclaimed)
}

// WriteReclaimed writes the table of ReclaimedMemory's rounds, if any.
func WriteReclaimed(w io.Writer, rs []ReclaimRound) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Memory after idle keys are reclaimed (tollgate)\n\n"+
		"Each round takes one token from %d keys never seen before, lets every bucket refill, and calls `ReclaimAt`; the heap is the live heap after a full collection, relative to the empty table.\n\n"+
		"| round | held, bytes/key | forgotten | left after the reclaim |\n|---:|---:|---:|---:|\n", rs[0].Keys)
	for _, r := range rs {
		fmt.Fprintf(w, "| %d | %.1f | %d | %d bytes |\n", r.Round, float64(r.Held)/float64(r.Keys), r.Reclaimed, r.Left)
	}
}

// peersOf lists the designs of group other than tollgate, in suite order.
func peersOf(rs []Result, group string) []string {
	var peers []string
	for _, r := range rs {
		if r.Group == group && r.Design != Tollgate && !slices.Contains(peers, r.Design) {
			peers = append(peers, r.Design)
		}
	}
	return peers
}

// groups lists the groups of rs in order of first appearance.
func groups(rs []Result) []string {
	var gs []string
	for _, r := range rs {
		if !slices.Contains(gs, r.Group) {
			gs = append(gs, r.Group)
		}
	}
	return gs
}

func find(rs []Result, group, design string, g int) (Result, bool) {
	for _, r := range rs {
		if r.Group == group && r.Design == design && r.G == g {
			return r, true
		}
	}
	return Result{}, false
}

func gsOf(rs []Result, group string) []int {
	var gs []int
	for _, r := range rs {
		if r.Group == group && !slices.Contains(gs, r.G) {
			gs = append(gs, r.G)
		}
	}
	slices.Sort(gs)
	return gs
}

// WriteTable writes the markdown ratio tables: for every group and
// goroutine count, tollgate's ns/op, cpu-ns/op, p50 and p99, and tollgate's
// ns/op divided by each peer's (Compare), with the same ratio of cpu-ns/op
// in parentheses (below 1.00 tollgate is faster; above, it loses). A ratio
// whose difference is not significant over the rounds is marked "~"; a
// latency the clock reads cannot resolve, "(timer)".
func WriteTable(w io.Writer, rs []Result, mem []MemResult) {
	for _, group := range groups(rs) {
		peers := peersOf(rs, group)
		fmt.Fprintf(w, "\n### %s\n\n", group)
		if _, ok := find(rs, group, Tollgate, gsOf(rs, group)[0]); !ok {
			writeDesigns(w, rs, group, peers)
			continue
		}
		cols := []string{"goroutines", "tollgate ns/op", "cpu-ns/op", "p50 ns", "p99 ns", "allocs/op"}
		for _, p := range peers {
			cols = append(cols, "÷ "+p)
		}
		tableHead(w, cols)
		for _, g := range gsOf(rs, group) {
			tg, ok := find(rs, group, Tollgate, g)
			if !ok {
				continue
			}
			fmt.Fprintf(w, "| %d | %.1f | %.1f | %s | %s | %d |", g, tg.NsPerOp, tg.Extra["cpu-ns/op"], latencyCell(tg, "p50-ns"), latencyCell(tg, "p99-ns"), tg.AllocsPerOp)
			for _, p := range peers {
				if pr, ok := find(rs, group, p, g); ok {
					fmt.Fprintf(w, " %s (%.2f) |", Compare(tg, pr, 1).cell(), tg.Extra["cpu-ns/op"]/pr.Extra["cpu-ns/op"])
				} else {
					fmt.Fprint(w, " – |")
				}
			}
			fmt.Fprintln(w)
		}
	}
	writeFairness(w, rs)
	writeCores(w, rs)
	writeRetries(w, rs)
	if len(mem) > 0 {
		fmt.Fprintf(w, "\n### Memory per idle key at %d keys\n\n| design | bytes/key |\n|---|---:|\n", mem[0].Keys)
		for _, m := range mem {
			fmt.Fprintf(w, "| %s | %.1f |\n", m.Design, m.BytesPerKey)
		}
	}
}

// timerBound reports whether a latency of v ns, measured as one operation
// between two clock reads that alone take clock ns, is mostly the clock:
// under twice the clock reads, the operation is less than half of it.
func timerBound(v, clock float64) bool { return clock > 0 && v < 2*clock }

// latencyCell is r's latency metric (p50-ns or p99-ns) in ns, followed by
// "(timer)" when the clock reads cannot resolve it (timerBound).
func latencyCell(r Result, metric string) string {
	v := r.Extra[metric]
	if timerBound(v, r.Extra["clock-ns"]) {
		return fmt.Sprintf("%.0f (timer)", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// tableHead writes a markdown table's head: the columns, right-aligned.
func tableHead(w io.Writer, cols []string) {
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---:|", len(cols)))
}

// writeDesigns writes a group tollgate is not in (the floors on a line per
// goroutine): each design's ns/op, CPU ns/op in parentheses.
func writeDesigns(w io.Writer, rs []Result, group string, designs []string) {
	cols := []string{"goroutines"}
	for _, d := range designs {
		cols = append(cols, d+" ns/op")
	}
	tableHead(w, cols)
	for _, g := range gsOf(rs, group) {
		fmt.Fprintf(w, "| %d |", g)
		for _, d := range designs {
			if r, ok := find(rs, group, d, g); ok {
				fmt.Fprintf(w, " %.1f (%.1f) |", r.NsPerOp, r.Extra["cpu-ns/op"])
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
}

// Comparison is one design's time per operation against another's at the
// same goroutine count, over the rounds in which they ran interleaved.
type Comparison struct {
	A, B  float64 // the two medians, ns/op
	Ratio float64 // A ÷ B: the ratio of the medians
	// Lo and Hi are the smallest and the largest ratio within one round
	// (both designs ran one right after the other in it); Ratio when the
	// rounds do not pair (one round, or a failed one).
	Lo, Hi float64
	// P is the two-sided Mann–Whitney p-value of the rounds' ns/op of the
	// one design against the other's times the bound; N the rounds of each
	// (the fewer).
	P float64
	N int
}

// Significant reports whether the difference is significant at Alpha.
func (c Comparison) Significant() bool { return c.P < Alpha }

// Compare compares a's rounds with b's scaled by bound (a target "a ≤
// bound × b" holds significantly when a is below and P < Alpha).
func Compare(a, b Result, bound float64) Comparison {
	c := Comparison{A: a.NsPerOp, B: b.NsPerOp, Ratio: a.NsPerOp / b.NsPerOp}
	c.Lo, c.Hi = c.Ratio, c.Ratio
	if len(a.Rounds) >= 2 && len(a.Rounds) == len(b.Rounds) {
		c.Lo, c.Hi = math.Inf(1), math.Inf(-1)
		for i := range a.Rounds {
			r := a.Rounds[i] / b.Rounds[i]
			c.Lo, c.Hi = min(c.Lo, r), max(c.Hi, r)
		}
	}
	ys := make([]float64, len(b.Rounds))
	for i, y := range b.Rounds {
		ys[i] = bound * y
	}
	_, c.P = MannWhitney(a.Rounds, ys)
	c.N = min(len(a.Rounds), len(b.Rounds))
	return c
}

// cell is a ratio cell: the ratio of the medians, bold above 1, the range
// of the rounds' own ratios in brackets when they differ, and "~" when the
// difference is not significant.
func (c Comparison) cell() string {
	s := ratioCell(c.Ratio)
	if c.Lo != c.Hi {
		s = fmt.Sprintf("%s [%.2f–%.2f]", s, c.Lo, c.Hi)
	}
	if !c.Significant() {
		s += " ~"
	}
	return s
}

// ratioCell prints a ratio, bold where tollgate loses (above 1.00).
func ratioCell(r float64) string {
	if r > 1 {
		return fmt.Sprintf("**%.2f**", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// Target is one of the performance targets, measured.
type Target struct {
	What  string
	Ratio float64 // measured value divided by the bound; ≤ 1 meets it
	// CPURatio is the same ratio of CPU time per operation, for the
	// timing targets (0 for the others).
	CPURatio float64
	// P and N are the timing targets' Mann–Whitney p-value and rounds
	// (Comparison); N is 0 for the allocation and memory targets, which
	// are counted, not sampled.
	P    float64
	N    int
	Text string
}

// memTarget is the memory target per idle key, bytes (issue 28: below the
// sharded mutex map's 83.7).
const memTarget = 80

// Targets evaluates the targets the results cover (issues 12 and 28): a
// ratio of tollgate's time per operation to a peer's at the same goroutine
// count must be at most the bound, significantly over the rounds, and the
// allocation and memory targets at most their limits.
func Targets(rs []Result, mem []MemResult) []Target {
	var ts []Target
	ratio := func(what, group, peer string, g int, bound float64) {
		tg, ok1 := find(rs, group, Tollgate, g)
		pr, ok2 := find(rs, group, peer, g)
		if !ok1 || !ok2 {
			return
		}
		c := Compare(tg, pr, bound)
		cr := tg.Extra["cpu-ns/op"] / pr.Extra["cpu-ns/op"]
		ts = append(ts, Target{What: what, Ratio: c.Ratio / bound, CPURatio: cr / bound, P: c.P, N: c.N, Text: fmt.Sprintf("%.1f ns ÷ %.1f ns = %.2f× (medians of %d rounds; the rounds' own ratios %.2f–%.2f; Mann–Whitney p=%.3f) (target ≤ %.2f×; CPU time per op: %.1f ÷ %.1f = %.2f×)",
			c.A, c.B, c.Ratio, c.N, c.Lo, c.Hi, c.P, bound, tg.Extra["cpu-ns/op"], pr.Extra["cpu-ns/op"], cr)})
	}
	allocs := func(what, group string) {
		worst, found := Result{}, false
		for _, g := range gsOf(rs, group) {
			if tg, ok := find(rs, group, Tollgate, g); ok && (!found || tg.AllocsPerOp > worst.AllocsPerOp) {
				worst, found = tg, true
			}
		}
		if found {
			ts = append(ts, Target{What: what, Ratio: float64(worst.AllocsPerOp), Text: fmt.Sprintf("at most %d allocs/op, %d B/op at every goroutine count (target 0 allocs/op)", worst.AllocsPerOp, worst.BytesPerOp)})
		}
	}
	const admit1, admitMany, refuse1 = "TB/work=admit/keys=1", "TB/work=admit/keys=10000", "TB/work=refuse/keys=1"
	const rr, cycle = "CR/work=reserve-release", "CR/work=cycle"
	for _, g := range gsOf(rs, admit1) {
		ratio(fmt.Sprintf("Take admitting, 1 key, %s, vs mutex-per-bucket", goroutines(g)), admit1, MutexMap, g, 1)
	}
	allocs("Take admitting, allocations", admit1)
	for _, g := range gsOf(rs, admitMany) {
		ratio(fmt.Sprintf("Take admitting, 10,000 keys, %s, vs sharded-mutex", goroutines(g)), admitMany, ShardedMap, g, 1)
	}
	for _, g := range gsOf(rs, rr) {
		ratio(fmt.Sprintf("Credits reserve+release, %s, vs mutex-table", goroutines(g)), rr, MutexTable, g, 1)
		ratio(fmt.Sprintf("Credits reserve+release, %s, vs buffered-channel semaphore", goroutines(g)), rr, ChanSem, g, 1)
	}
	allocs("Credits reserve+release, allocations", rr)
	for _, g := range gsOf(rs, cycle) {
		ratio(fmt.Sprintf("Credits full cycle, %s, vs owner mailbox", callers(g)), cycle, Mailbox, g, 1)
	}
	for _, g := range gsOf(rs, refuse1) {
		if g >= 8 {
			ratio(fmt.Sprintf("Take refused, 1 key, %s, vs mutex-per-bucket", goroutines(g)), refuse1, MutexMap, g, 1)
		}
	}
	allocs("Take refused, allocations", refuse1)
	for _, m := range mem {
		if m.Design == Tollgate {
			ts = append(ts, Target{What: fmt.Sprintf("Memory per idle key at %d keys", m.Keys), Ratio: m.BytesPerKey / memTarget, Text: fmt.Sprintf("%.1f bytes/key (target ≤ %d)", m.BytesPerKey, memTarget)})
		}
	}
	return ts
}

// WriteTargets writes the targets as a markdown list, each with its
// Verdict.
func WriteTargets(w io.Writer, ts []Target) {
	for _, t := range ts {
		fmt.Fprintf(w, "- %s: %s — %s\n", t.What, t.Text, t.Verdict())
	}
}

// Verdict is the target's outcome. A timing target whose rounds do not
// tell the two designs apart (P ≥ Alpha) is "~ (not significant, p=…,
// n=…)", whichever side its ratio falls on. Otherwise a timing target is
// "met" when both the wall-time and the CPU-time ratio are at most 1,
// "MISSED" when both exceed it, and borderline when they disagree; an
// allocation or memory target is met or MISSED by its count.
func (t Target) Verdict() string {
	if t.N > 0 && t.P >= Alpha {
		return fmt.Sprintf("~ (not significant, p=%.3f, n=%d)", t.P, t.N)
	}
	met := t.Ratio <= 1
	if t.CPURatio != 0 && met != (t.CPURatio <= 1) {
		return "borderline (wall and CPU time disagree)"
	}
	if met {
		return "met"
	}
	return "MISSED"
}

// callers names g callers of the full cycle.
func callers(g int) string {
	if g == 1 {
		return "1 caller"
	}
	return fmt.Sprintf("%d callers", g)
}

func goroutines(g int) string {
	if g == 1 {
		return "1 goroutine"
	}
	return fmt.Sprintf("%d goroutines", g)
}

// plotName turns a group into a file name stem.
func plotName(group string) string {
	r := strings.NewReplacer("/", "_", "=", "-")
	return r.Replace(group)
}

// writeFairness writes, for each partly admitting (Mixed) group, every
// design's fair-spread and admitted fraction per goroutine count.
func writeFairness(w io.Writer, rs []Result) {
	for _, group := range groups(rs) {
		if !strings.Contains(group, "work="+string(Mixed)) {
			continue
		}
		designs := append([]string{Tollgate}, peersOf(rs, group)...)
		fmt.Fprintf(w, "\n### Fairness, %s\n\nfair-spread = (max−min)/mean of admissions per goroutine, each goroutine doing the same number of takes (0 is perfectly even); admitted fraction in parentheses.\n\n| goroutines |", group)
		for _, d := range designs {
			fmt.Fprintf(w, " %s |", d)
		}
		fmt.Fprint(w, "\n|---:|")
		for range designs {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w)
		for _, g := range gsOf(rs, group) {
			if g == 1 {
				continue
			}
			fmt.Fprintf(w, "| %d |", g)
			for _, d := range designs {
				r, ok := find(rs, group, d, g)
				if !ok {
					fmt.Fprint(w, " – |")
					continue
				}
				spread, has := r.Extra["fair-spread"]
				if !has {
					fmt.Fprintf(w, " – (%.3f) |", r.Extra["admit/op"])
					continue
				}
				fmt.Fprintf(w, " %.3f (%.3f) |", spread, r.Extra["admit/op"])
			}
			fmt.Fprintln(w)
		}
	}
}

// coresGroups are the groups whose two-goroutine cell writeCores details.
var coresGroups = []string{"TB/work=admit/keys=1", "CR/work=reserve-release", "CR/work=cycle"}

// writeCores writes, for two goroutines on the contended cases, how busy
// each design keeps the two cores and how often its threads sleep: a design
// that lets a goroutine sleep runs the other alone, uncontended, meanwhile.
func writeCores(w io.Writer, rs []Result) {
	for _, group := range coresGroups {
		designs := append([]string{Tollgate}, peersOf(rs, group)...)
		var rows []Result
		for _, d := range designs {
			if r, ok := find(rs, group, d, 2); ok {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### Busy cores and sleeping threads, %s, 2 goroutines\n\n"+
			"cores busy = cpu-ns/op ÷ ns/op (2.00: both cores ran the whole time); sleeps/Mop = times a thread of the process went to sleep in the kernel per million operations (getrusage's voluntary context switches); lock wait = time goroutines spent blocked on a lock per operation (the runtime's sampled /sync/mutex/wait/total); lockparks/op = blocks in sync.Mutex.Lock per operation, counted only with -tags tollgate_stats.\n\n", group)
		tableHead(w, []string{"design", "ns/op", "cpu-ns/op", "cores busy", "sleeps/Mop", "lock wait ns/op", "lockparks/op"})
		for _, r := range rows {
			parks := "–"
			if v, ok := r.Extra["lockparks/op"]; ok {
				parks = fmt.Sprintf("%.2g", v)
			}
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %.2f | %.1f | %.2f | %s |\n", r.Design, r.NsPerOp, r.Extra["cpu-ns/op"], r.Extra["cpu-ns/op"]/r.NsPerOp, r.Extra["sleeps/Mop"], r.Extra["lockwait-ns/op"], parks)
		}
	}
}

// writeRetries lists tollgate's lost compare-and-swap races per operation
// where the run counted them (-tags tollgate_stats).
func writeRetries(w io.Writer, rs []Result) {
	header := false
	for _, r := range rs {
		v, ok := r.Extra["casretries/op"]
		if !ok || r.Design != Tollgate {
			continue
		}
		if !header {
			fmt.Fprint(w, "\n### Lost compare-and-swap races per operation (tollgate)\n\n| case | goroutines | casretries/op |\n|---|---:|---:|\n")
			header = true
		}
		fmt.Fprintf(w, "| %s | %d | %.2g |\n", r.Group, r.G, v)
	}
}
