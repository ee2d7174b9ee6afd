package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFloorOpsCount: each floor operation really writes its word once per
// call, under contention too (a floor that lost updates would be a floor of
// nothing).
func TestFloorOpsCount(t *testing.T) {
	for _, op := range floorOps {
		var w floorWord
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10_000 {
					op.do(&w)
				}
			}()
		}
		wg.Wait()
		lo, _ := w.pair.Load()
		if got := lo + w.n.Load(); got != 40_000 {
			t.Errorf("%s: 40,000 operations wrote %d", op.name, got)
		}
	}
	var w floorWord
	floorCr{&w}.Cycle()
	if lo, _ := w.pair.Load(); lo != 2 {
		t.Errorf("%s: one cycle made %d compare-and-swaps, want 2", FloorCAS128x2, lo)
	}
}

// TestFloorsInResults: the floors are measured in the same run as the
// designs and RESULTS.md divides tollgate by them beside the peers; the
// floors on a line per goroutine get a table of their own.
func TestFloorsInResults(t *testing.T) {
	dir := t.TempDir()
	c := Config{Out: dir, Benchtime: time.Millisecond, Rounds: 1,
		Run: `TB/work=admit/keys=1/g=(1|2)/design=(tollgate|mutex-per-bucket|floor-cas128)$|reserve-release/g=1/design=(tollgate|floor-cas128x2)$|FLOOR/line=own/g=(1|2)/design=floor-add$`}
	var progress strings.Builder
	if err := Run(c, &progress); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| ÷ mutex-per-bucket | ÷ floor-cas128 |", "| ÷ floor-cas128x2 |", "### FLOOR/line=own", "| goroutines | floor-add ns/op |", "The floor columns"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, md)
		}
	}
}

// TestCompare: a ratio is the ratio of the two medians — the quotient of
// the numbers printed beside it — with the range of the rounds' own ratios
// (each round ran both designs one after the other); rounds that do not
// pair give the ratio of the medians alone; the p-value is the rounds'
// Mann–Whitney test.
func TestCompare(t *testing.T) {
	a := Result{NsPerOp: 20, Rounds: []float64{10, 20, 40}}
	b := Result{NsPerOp: 20, Rounds: []float64{20, 20, 20}}
	if c := Compare(a, b, 1); c.Ratio != 1 || c.Lo != 0.5 || c.Hi != 2 || c.N != 3 {
		t.Errorf("Compare = %+v, want ratio 1 [0.5, 2] over 3 rounds", c)
	}
	if got := Compare(a, b, 1).cell(); got != "1.00 [0.50–2.00] ~" {
		t.Errorf("cell = %q", got)
	}
	b.Rounds = b.Rounds[:2]
	if c := Compare(a, b, 1); c.Ratio != 1 || c.Lo != 1 || c.Hi != 1 {
		t.Errorf("unpaired rounds: %+v, want the ratio of the medians alone", c)
	}
	// The review's case: medians 47.2 and 118.1, whose quotient is 0.40,
	// while the median of the rounds' own ratios is 0.43.
	a = Result{NsPerOp: 47.2, Rounds: []float64{40, 45, 47.2, 47.2, 50, 60}}
	b = Result{NsPerOp: 118.1, Rounds: []float64{140, 104.7, 110, 118.1, 118.1, 100}}
	c := Compare(a, b, 1)
	if math.Abs(c.Ratio-47.2/118.1) > 1e-12 {
		t.Errorf("ratio %v, want 47.2/118.1", c.Ratio)
	}
	if _, p := MannWhitney(a.Rounds, b.Rounds); c.P != p || !c.Significant() {
		t.Errorf("p %v, want the rounds' Mann–Whitney p %v, significant", c.P, p)
	}
	if got := c.cell(); got != "0.40 [0.29–0.60]" {
		t.Errorf("cell = %q", got)
	}
	if got := (Comparison{Ratio: 1.5, Lo: 1.5, Hi: 1.5, P: 0.01}).cell(); got != "**1.50**" {
		t.Errorf("cell of one ratio = %q", got)
	}
}

// TestTargetTextAgrees: the ratio a target prints is the quotient of the
// two times it prints, to the digits shown, and its verdict follows the
// p-value it prints (issue 45: "47.2 ns ÷ 118.1 ns: 0.43×").
func TestTargetTextAgrees(t *testing.T) {
	group := "TB/work=admit/keys=1"
	rs := []Result{
		{Case: Case{Group: group, Design: Tollgate, G: 2}, NsPerOp: 47.2, Rounds: []float64{40, 45, 47.2, 47.2, 50, 60}, Extra: map[string]float64{"cpu-ns/op": 90}},
		{Case: Case{Group: group, Design: MutexMap, G: 2}, NsPerOp: 118.1, Rounds: []float64{140, 104.7, 110, 118.1, 118.1, 100}, Extra: map[string]float64{"cpu-ns/op": 200}},
	}
	ts := Targets(rs, nil)
	if len(ts) == 0 {
		t.Fatal("no target")
	}
	re := regexp.MustCompile(`^([0-9.]+) ns ÷ ([0-9.]+) ns = ([0-9.]+)× .*p=([0-9.]+)\)`)
	m := re.FindStringSubmatch(ts[0].Text)
	if m == nil {
		t.Fatalf("target text %q not in the expected form", ts[0].Text)
	}
	num, _ := strconv.ParseFloat(m[1], 64)
	den, _ := strconv.ParseFloat(m[2], 64)
	if got := fmt.Sprintf("%.2f", num/den); got != m[3] {
		t.Errorf("%q: %s ÷ %s is %s, the text says %s", ts[0].Text, m[1], m[2], got, m[3])
	}
	p, _ := strconv.ParseFloat(m[4], 64)
	if met := ts[0].Verdict() == "met"; met != (p < Alpha) {
		t.Errorf("verdict %q with p=%v", ts[0].Verdict(), p)
	}
}

// TestP99Outliers: a plotted p99 is the median of the rounds', so one
// disturbed round does not stretch the axis; that round is named instead.
func TestP99Outliers(t *testing.T) {
	r := Result{Case: Case{Group: "TB/work=admit/keys=1", Design: Tollgate, G: 8}, P99Rounds: []float64{300, 310, 90000, 305, 295, 320}, Extra: map[string]float64{"p99-ns": 90000}}
	if got := p99Point(r); got != 305 {
		t.Errorf("p99Point = %v, want the median round's 305", got)
	}
	out := P99Outliers([]Result{r})
	if len(out) != 1 || !strings.Contains(out[0], "round 3 had a p99 of 90000 ns, 295× the median") {
		t.Errorf("P99Outliers = %q", out)
	}
	r.P99Rounds[2] = 2000 // under 10× the median: not an outlier
	if out := P99Outliers([]Result{r}); len(out) != 0 {
		t.Errorf("P99Outliers = %q, want none", out)
	}
}
