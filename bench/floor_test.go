package bench

import (
	"os"
	"path/filepath"
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

// TestPairedRatio: a ratio is the median of the rounds' own ratios (each
// round ran both designs one after the other), with their range; rounds
// that do not pair give the ratio of the medians.
func TestPairedRatio(t *testing.T) {
	a := Result{NsPerOp: 20, Rounds: []float64{10, 20, 40}}
	b := Result{NsPerOp: 20, Rounds: []float64{20, 20, 20}}
	if med, lo, hi := pairedRatio(a, b); med != 1 || lo != 0.5 || hi != 2 {
		t.Errorf("pairedRatio = %v [%v, %v], want 1 [0.5, 2]", med, lo, hi)
	}
	if got := spreadCell(pairedRatio(a, b)); got != "1.00 [0.50–2.00]" {
		t.Errorf("spreadCell = %q", got)
	}
	b.Rounds = b.Rounds[:2]
	if med, lo, hi := pairedRatio(a, b); med != 1 || lo != 1 || hi != 1 {
		t.Errorf("unpaired rounds: %v [%v, %v], want the ratio of the medians alone", med, lo, hi)
	}
	if got := spreadCell(1.5, 1.5, 1.5); got != "**1.50**" {
		t.Errorf("spreadCell of one ratio = %q", got)
	}
}
