package bench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// The benchmarks refuse to report numbers from a design that broke the
// spec under the contention it was measured at. These tests show each such
// check passing on the correct designs and failing on a fault.

// mutantTB is the tollgate design (tollgateTB) on a table of any package,
// so that a check can be shown failing on a mutant; the benchmarks measure
// tollgateTB on the concrete *tokenbucket.Table.
type mutantTB struct {
	t   sut.TBTable[uint64]
	lim tokenbucket.Limits
}

func (d *mutantTB) TakeAt(nowMs int64, key uint64, _ any) bool {
	_, ok, err := d.t.TakeAt(nowMs, key, d.lim, 1)
	if err != nil {
		panic(fmt.Sprintf("bench: tollgate rejected valid limits: %v", err))
	}
	return ok
}

func (d *mutantTB) tokens(nowMs int64, key uint64) float64 {
	v, err := d.t.PeekAt(nowMs, key, d.lim)
	if err != nil {
		panic(fmt.Sprintf("bench: tollgate rejected valid limits: %v", err))
	}
	return v
}

// mutantCr is the tollgate design (tollgateCr) on a table of any package:
// the table of f's package, each goroutine with its own Holder. It repeats
// tollgateCr's few lines over the interface rather than the benchmark
// calling through it: the benchmark's numbers are the concrete table's, not
// a dynamic call's.
type mutantCr struct {
	t    sut.CrTable[int]
	h    *credits.Holder
	lost *atomic.Int64
}

func newMutantCr(f fault.Fault) func() Admitter {
	t := sut.NewCrTable[int](f)
	lost := new(atomic.Int64)
	return func() Admitter { return mutantCr{t: t, h: credits.NewHolder(), lost: lost} }
}

func (d mutantCr) Cycle() bool {
	tok, res := d.t.Reserve(d.h, credits.General)
	if res != credits.OK {
		return false
	}
	if !d.t.Release(d.h, tok) {
		d.lost.Add(1)
	}
	return true
}

func (d mutantCr) check() error { return checkCr(d.lost.Load(), d.t.Snapshot()) }

// tbAdmitRun runs the Admit workload of RunTB (without timing) on inst
// with g goroutines and n takes over keys keys, and returns the result of
// the T1 conservation check.
func tbAdmitRun(inst Bucketer, g, n, keys int) error {
	lim := Admit.Limits(keys)
	setupTB(inst, Admit, keys)
	st := summarize(runWorkers(g, n, tbOps(inst, Admit, keys), nil))
	if st.admitFrac != 1 {
		return nil // not an admitting run; the caller checks admitFrac separately
	}
	return conserved(inst, lim, keys, st.admitted)
}

func TestT1ConservationHoldsUnderContention(t *testing.T) {
	for _, d := range TBDesigns() {
		for _, keys := range []int{1, 16} {
			inst := d.New(Admit.Limits(keys), keys)
			if err := tbAdmitRun(inst, 8, 100_000, keys); err != nil {
				t.Errorf("%s keys=%d g=8: %v", d.Name, keys, err)
			}
		}
	}
}

// teethBudget is how long a test that shows a check catching a race mutant
// keeps trying. The races are not certain in one run: on an idle machine
// the first run or two catch them, but beside two CPU hogs 10 runs once
// caught nothing in 100 tries (the goroutines then mostly run one after
// another). The interleaving explorer kills these mutants deterministically;
// these tests are about the benchmark's own checks.
const teethBudget = 30 * time.Second

// TestT1ConservationCatchesTBPlainStore: a take that commits with a plain
// store loses concurrent takes, and the Admit run's check sees tokens
// that were admitted but never removed. Races are not certain in one run,
// so it tries for up to teethBudget.
func TestT1ConservationCatchesTBPlainStore(t *testing.T) {
	build.Need(t)
	start := time.Now()
	for attempt := 1; attempt <= 10 || time.Since(start) < teethBudget; attempt++ {
		inst := &mutantTB{
			t:   sut.NewTBTable[uint64](fault.Named("tb-plain-store")),
			lim: tokenbucket.Limits(Admit.Limits(1)),
		}
		if err := tbAdmitRun(inst, 8, 200_000, 1); err != nil {
			t.Logf("attempt %d caught %s: %v", attempt, fault.Named("tb-plain-store"), err)
			return
		}
	}
	t.Fatalf("runs of 8 goroutines × 200,000 takes on one key for %v never caught %s", teethBudget, fault.Named("tb-plain-store"))
}

func crRun(newCaller func() func() Admitter, g, n int) (Admitter, runStats) {
	caller := newCaller()
	var probe Admitter
	ws := runWorkers(g, n, func(int) opFunc {
		a := caller()
		probe = a
		return func(int) bool { return a.Cycle() }
	}, nil)
	return probe, summarize(ws)
}

func TestReserveReleaseCheckHolds(t *testing.T) {
	probe, st := crRun(newTollgateCr, 8, 100_000)
	if err := probe.(checker).check(); err != nil {
		t.Fatal(err)
	}
	if st.admitFrac != 1 {
		t.Fatalf("8 goroutines on 26 slots: admitted %v of reserves, want all", st.admitFrac)
	}
}

// TestReserveReleaseCheckCatchesCrReserveNoCAS: a reserve that claims a
// free slot with a plain store lets two goroutines hold one slot; the
// first one's release then fails (C9). Tries for up to teethBudget.
func TestReserveReleaseCheckCatchesCrReserveNoCAS(t *testing.T) {
	build.Need(t)
	start := time.Now()
	for attempt := 1; attempt <= 10 || time.Since(start) < teethBudget; attempt++ {
		probe, _ := crRun(func() func() Admitter { return newMutantCr(fault.Named("cr-reserve-no-cas")) }, 8, 100_000)
		if err := probe.(checker).check(); err != nil {
			t.Logf("attempt %d caught %s: %v", attempt, fault.Named("cr-reserve-no-cas"), err)
			return
		}
	}
	t.Fatalf("runs of 8 goroutines × 100,000 reserves for %v never caught %s", teethBudget, fault.Named("cr-reserve-no-cas"))
}

// TestWorkloadsDoWhatTheySay: every design admits every take of the Admit
// workload and refuses every take of the Refuse workload, so the designs
// are measured doing the same work.
func TestWorkloadsDoWhatTheySay(t *testing.T) {
	for _, d := range TBDesigns() {
		for _, w := range []Workload{Admit, Refuse} {
			if d.AdmitOnly && w != Admit {
				continue
			}
			inst := d.New(w.Limits(16), 16)
			setupTB(inst, w, 16)
			st := summarize(runWorkers(2, 5000, tbOps(inst, w, 16), nil))
			want := 1.0
			if w == Refuse {
				want = 0
			}
			if st.admitFrac != want {
				t.Errorf("%s on %s: admitted %v of takes, want %v", d.Name, w, st.admitFrac, want)
			}
		}
	}
}

// TestMutexTableMatchesModel drives the mutex-guarded peer table and the
// credit model with the same random reserves and releases (C2, C3, C9), so
// the peer is the same table, not a cheaper one.
func TestMutexTableMatchesModel(t *testing.T) {
	seed := uint64(rand.Int64())
	rng := rand.New(rand.NewPCG(seed, 1))
	var mt mutexTable
	var m model.Credits[int]
	type held struct {
		h    uint64
		tok  model.Token
		slot int
		ep   uint64
	}
	var live []held
	var ops []string
	for step := range 2000 {
		h := uint64(rng.IntN(4) + 1)
		if len(live) == 0 || rng.IntN(3) > 0 {
			slot, ep := mt.reserve(h, 1, credits.GeneralSlots)
			next, tok, res := m.Reserve(model.HolderID(h), model.General)
			m = next
			ops = append(ops, "reserve")
			if (res == model.OK) != (slot != 0) || res == model.OK && (tok.Slot != slot || tok.Epoch != ep) {
				t.Fatalf("seed %d step %d (ops %v): mutex table reserved slot %d epoch %d, model %v %+v", seed, step, tail(ops), slot, ep, res, tok)
			}
			if slot != 0 {
				live = append(live, held{h: h, tok: tok, slot: slot, ep: ep})
			}
			continue
		}
		i := rng.IntN(len(live))
		r := live[i]
		by := r.h
		if rng.IntN(4) == 0 {
			by = by%4 + 1 // another holder's release must fail
		}
		got := mt.release(by, r.slot, r.ep)
		next, want := m.Release(model.HolderID(by), r.tok)
		m = next
		ops = append(ops, "release")
		if got != want {
			t.Fatalf("seed %d step %d (ops %v): release of slot %d by holder %d: mutex table %v, model %v", seed, step, tail(ops), r.slot, by, got, want)
		}
		if got {
			live = append(live[:i], live[i+1:]...)
		}
	}
}

func tail(ops []string) []string { return ops[max(0, len(ops)-8):] }

func TestSuiteNamesAreUniqueAndGrouped(t *testing.T) {
	for _, full := range []bool{false, true} {
		seen := map[string]bool{}
		for _, c := range Suite(full) {
			if seen[c.Name] {
				t.Errorf("full=%v: case %s twice", full, c.Name)
			}
			seen[c.Name] = true
			if !strings.HasPrefix(c.Name, c.Group+"/") || !strings.HasSuffix(c.Name, "/design="+c.Design) {
				t.Errorf("full=%v: case %s does not fit group %s and design %s", full, c.Name, c.Group, c.Design)
			}
		}
	}
}

func TestTableMarksWhereTollgateLoses(t *testing.T) {
	rs := []Result{
		{Case: Case{Group: "TB/work=admit/keys=1", Design: Tollgate, G: 1}, NsPerOp: 30, Rounds: []float64{29, 30, 31, 32, 28, 30.5}, Extra: map[string]float64{"p50-ns": 35, "p99-ns": 90, "clock-ns": 20, "cpu-ns/op": 40}},
		{Case: Case{Group: "TB/work=admit/keys=1", Design: XRateSingle, G: 1}, NsPerOp: 20, Rounds: []float64{20, 19, 21, 20, 22, 18}, Extra: map[string]float64{"cpu-ns/op": 20}},
		{Case: Case{Group: "TB/work=admit/keys=1", Design: MutexMap, G: 1}, NsPerOp: 60, Rounds: []float64{60, 58, 62, 61, 59, 60.5}, Extra: map[string]float64{"cpu-ns/op": 100}},
	}
	var buf bytes.Buffer
	WriteTable(&buf, rs, nil)
	if !strings.Contains(buf.String(), "| 1 | 30.0 | 40.0 | 35 (timer) | 90 | 0 | **1.50** [1.27–1.69] (2.00) | 0.50 [0.47–0.52] (0.40) |") {
		t.Errorf("table:\n%s", buf.String())
	}
	ts := Targets(rs, []MemResult{{Design: Tollgate, Keys: 1000, BytesPerKey: 120}})
	if len(ts) != 3 || ts[0].Ratio != 0.5 || ts[0].CPURatio != 0.4 || ts[0].Verdict() != "met" ||
		ts[1].What != "Take admitting, allocations" || ts[1].Verdict() != "met" ||
		ts[2].Ratio != 120.0/memTarget || ts[2].Verdict() != "MISSED" {
		t.Errorf("targets: %+v", ts)
	}
	if v := (Target{Ratio: 0.9, CPURatio: 1.1, P: 0.01, N: 6}).Verdict(); !strings.HasPrefix(v, "borderline") {
		t.Errorf("wall 0.9, CPU 1.1: verdict %q, want borderline", v)
	}
	// The same ratios over rounds that do not tell the designs apart are
	// no verdict, whichever side they fall on.
	for _, r := range []float64{0.5, 1.5} {
		if v := (Target{Ratio: r, CPURatio: r, P: 0.1, N: 3}).Verdict(); v != "~ (not significant, p=0.100, n=3)" {
			t.Errorf("ratio %v at p=0.1: verdict %q", r, v)
		}
	}
	// Three rounds each, separated: benchstat's "~ (p=0.100 n=3)".
	three := slices.Clone(rs)
	for i := range three {
		three[i].Rounds = three[i].Rounds[:3]
	}
	if ts := Targets(three, nil); len(ts) == 0 || !strings.HasPrefix(ts[0].Verdict(), "~ (not significant, p=0.100, n=3)") {
		t.Errorf("three rounds: %+v", ts)
	}
}

// TestRunnerReportsFailedChecks: a case that fails its check has no result
// and is reported with its replay command, instead of being dropped.
func TestRunnerReportsFailedChecks(t *testing.T) {
	cases := []Case{
		{Name: "TB/work=admit/keys=1/g=1/design=broken", Group: "TB/work=admit/keys=1", Design: "broken", G: 1,
			Run: func(b B) { fail(b, "bench: T1 lost update (test)") }},
		{Name: "TB/work=admit/keys=1/g=1/design=tollgate", Group: "TB/work=admit/keys=1", Design: Tollgate, G: 1,
			Run: func(b B) {
				parallel(b, 1, func(int) opFunc { return func(int) bool { return true } })
			}},
	}
	rs, failed := Runner{Rounds: 2, Benchtime: time.Millisecond}.Run(cases)
	if len(rs) != 1 || rs[0].Design != Tollgate || len(rs[0].Rounds) != 2 {
		t.Fatalf("results: %+v", rs)
	}
	// Two rounds: the median is their mean, as benchstat takes it.
	if r := rs[0]; r.NsPerOp != (r.Rounds[0]+r.Rounds[1])/2 {
		t.Errorf("ns/op %v, want the mean of the two rounds %v", r.NsPerOp, r.Rounds)
	}
	if len(failed) != 2 || !strings.Contains(failed[0], "T1 lost update (test)") || !strings.Contains(failed[0], "-bench 'Suite/TB/work=admit/keys=1/g=1/design=broken$'") {
		t.Errorf("failed: %q", failed)
	}
}
