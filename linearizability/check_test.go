package linearizability

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/model"
)

var (
	flagBudget = flag.Duration("lin.budget", 0, "time each short check of the real tables records and checks histories (0: 300ms, 1s in the long run)")
	flagHunt   = flag.Duration("lin.hunt", 10*time.Second, "budget within which each concurrency mutant must be reported Illegal")
	flagSeed   = flag.Uint64("lin.seed", 1, "seed of the operation scripts")
)

// failDir is where the tests write failing histories: kept after the test
// so the printed paths can be opened.
func failDir() string { return filepath.Join(os.TempDir(), "tollgate-lin-test") }

func shortCheck(t *testing.T, prim string) {
	n := len(TBWorkloads())
	if prim == PrimitiveCredits {
		n = len(CrWorkloads())
	}
	// Every workload records at least one history whatever the budget
	// (MinHistories); the budget adds more of them. By default 300 ms (a
	// history of porcupine's hard cases can take seconds of CPU to check,
	// and this check sees no mutant: TestMutantsIllegal does); the long run
	// (testlong) records for a second, as -lin.budget's old default did.
	budget := *flagBudget
	if budget == 0 {
		budget = 300 * time.Millisecond
		if testlong.Enabled() {
			budget = time.Second
		}
	}
	p := Plan{Primitive: prim, Duration: budget, Seed: *flagSeed, Timeout: 30 * time.Second, Dir: failDir(), MinHistories: n}
	tally, err := Run(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d histories, %d operations, porcupine %v", prim, tally.Histories, tally.Ops, tally.CheckTime)
	if r := tally.Result(); r != Ok {
		rep := tally.First
		t.Fatalf("%s on the real table (workload %s, seed %d): %s\nvisualization: %s\nhistory: %s\nreplay: go run ./cmd/tollgate check --replay %s",
			r, tally.FirstWorkload, tally.FirstSeed, rep.Detail, rep.HTMLPath, rep.JSONPath, rep.JSONPath)
	}
	if tally.Histories < n {
		t.Fatalf("only %d histories: not every workload ran", tally.Histories)
	}
}

// TestShortTokenBucket: every recorded token-bucket history of the real
// table is linearizable (T11), over every workload.
func TestShortTokenBucket(t *testing.T) { shortCheck(t, PrimitiveTokenBucket) }

// TestShortCredits: every recorded credit-table history of the real table is
// linearizable and issues no epoch twice (C16, C3), over every workload.
func TestShortCredits(t *testing.T) { shortCheck(t, PrimitiveCredits) }

// concurrencyOnly are the faults no sequential check can see (fuzz
// SequentiallyVisible): this layer must report each of them.
var concurrencyOnly = []fault.Fault{fault.Named("tb-plain-store"), fault.Named("tb-fail-closed"), fault.Named("cr-two-write-enqueue"), fault.Named("cr-reserve-no-cas")}

// TestMutantsIllegal: every fault this layer claims to see (Sees) is
// reported Illegal within -lin.hunt; the concurrency-only ones first.
func TestMutantsIllegal(t *testing.T) {
	build.Need(t)
	// Hunt writes each failing history under $TMPDIR/tollgate-porcupine
	// for a person to open; the test's go where t.TempDir removes them.
	t.Setenv("TMPDIR", t.TempDir())
	order := append([]fault.Fault(nil), concurrencyOnly...)
	order = append(order, fault.Named("tb-timestamp-regress"))
	for _, f := range fault.All() {
		if mutant.Expected("porcupine", f) && !containsFault(order, f) {
			order = append(order, f)
		}
	}
	for _, f := range order {
		t.Run(f.String(), func(t *testing.T) {
			if !mutant.Expected("porcupine", f) {
				t.Fatalf("the porcupine layer does not see %s, but it is one of the faults this layer must kill", f)
			}
			out := Hunt(f, *flagHunt, *flagSeed)
			if !out.Killed {
				t.Fatalf("%s survived %v of histories (seed %d): %s", f, out.Elapsed, out.Seed, out.Detail)
			}
			t.Logf("killed in %v (%s): %s", out.Elapsed.Round(time.Millisecond), out.Property, out.Replay)
		})
	}
}

func containsFault(fs []fault.Fault, f fault.Fault) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// TestStaleReadingsRecorded: the stale-clock workload really records takes
// whose clock reading is older than that of a take that had already
// returned when they were called (the T4 case), so the check exercises it.
func TestStaleReadingsRecorded(t *testing.T) {
	var w TBWorkload
	for _, x := range TBWorkloads() {
		if x.Name == "stale-clock" {
			w = x
		}
	}
	h, err := RecordTokenBucket(w, InProcessTB(fault.None), *flagSeed)
	if err != nil {
		t.Fatal(err)
	}
	stale := 0
	newest, newestReturn := int64(-1<<63), int64(0)
	// Ops are sorted by call; walk them keeping the newest reading among
	// successful takes that returned before the current call.
	var done []TBOp
	for _, op := range h.Ops {
		for _, d := range done {
			if d.Return < op.Call && d.Input.NowMs > newest {
				newest, newestReturn = d.Input.NowMs, d.Return
			}
		}
		if op.Input.Kind == model.TBTake && op.Output.OK {
			if op.Input.NowMs < newest && newestReturn < op.Call {
				stale++
			}
			done = append(done, op)
		}
	}
	t.Logf("%d of %d operations were takes with a reading older than a committed take's", stale, len(h.Ops))
	if stale == 0 {
		t.Fatal("no stale reading recorded: the T4 case is not exercised")
	}
}

// TestUnknownOutcomes: recorded histories with dropped answers check Ok, and
// the unknown operations are really there.
func TestUnknownOutcomes(t *testing.T) {
	var w CrWorkload
	for _, x := range CrWorkloads() {
		if x.Name == "sweep-race" {
			w = x
		}
	}
	unknown := 0
	for seed := *flagSeed; seed < *flagSeed+5; seed++ {
		h, err := RecordCredits(w, InProcessCr(fault.None), seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range h.Ops {
			if op.Unknown {
				unknown++
			}
		}
		rep, err := CheckCredits(h, Options{Timeout: 30 * time.Second, Dir: failDir(), Name: "unknown"})
		if err != nil || rep.Result != Ok {
			t.Fatalf("seed %d: %v %v %s; history %s", seed, rep.Result, err, rep.Detail, rep.JSONPath)
		}
	}
	if unknown == 0 {
		t.Fatal("no unknown outcome recorded")
	}
}

// TestCreditsRoundTrip: a credit-table history written as JSON loads back
// and checks the same.
func TestCreditsRoundTrip(t *testing.T) {
	h, err := RecordCredits(CrWorkloads()[0], InProcessCr(fault.None), *flagSeed)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckCredits(h, Options{Timeout: 30 * time.Second, Dir: t.TempDir(), Name: "h", AlwaysWrite: true})
	if err != nil || rep.Result != Ok {
		t.Fatalf("%v %v", rep.Result, err)
	}
	back, err := LoadHistory(rep.JSONPath)
	if err != nil || back.Credits == nil || len(back.Credits.Ops) != len(h.Ops) {
		t.Fatalf("LoadHistory: %v", err)
	}
	rep2, err := CheckCredits(*back.Credits, Options{Timeout: 30 * time.Second})
	if err != nil || rep2.Result != Ok {
		t.Fatalf("reloaded: %v %v", rep2.Result, err)
	}
}

// TestValidate: histories the model cannot judge are errors naming the field.
func TestValidate(t *testing.T) {
	tbBad := TBHistory{Ops: []TBOp{{Input: model.TBInput[string]{Kind: 9}}}}
	if err := tbBad.Validate(); err == nil {
		t.Error("token-bucket kind 9 accepted")
	}
	crCases := map[string]CrOp{
		"input.holder":      {Input: model.CrInput[Payload]{Kind: model.CrReserve, Class: model.General}},
		"input.class":       {Input: model.CrInput[Payload]{Kind: model.CrReserve, Holder: 1}},
		"input.token.slot":  {Input: model.CrInput[Payload]{Kind: model.CrTake, Token: model.Token{Slot: 33, Epoch: 1}}},
		"input.token.epoch": {Input: model.CrInput[Payload]{Kind: model.CrFinish, Token: model.Token{Slot: 3}}},
		"input.kind":        {Input: model.CrInput[Payload]{Kind: model.CrSnapshot}},
		"return":            {Input: model.CrInput[Payload]{Kind: model.CrSweep}, Call: 5, Return: 4},
	}
	for field, op := range crCases {
		err := CrHistory{Ops: []CrOp{op}}.Validate()
		if err == nil || !containsStr(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming %s", field, err, field)
		}
	}
	unknownReserve := CrOp{Input: model.CrInput[Payload]{Kind: model.CrReserve, Holder: 1, Class: model.General}, Unknown: true}
	if err := (CrHistory{Ops: []CrOp{unknownReserve}}).Validate(); err != nil {
		t.Errorf("an unknown reserve: %v, want it accepted (model.Credits.ReserveUnseen)", err)
	}
}

func containsStr(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
