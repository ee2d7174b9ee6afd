package interleave

import (
	"flag"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// generatedLong runs the generated set at the default bound (TestSystematicRealCode).
var generatedLong = flag.Bool("explore.long", false, "TestSystematicRealCode: explore every generated scenario at bound 2 (CI runs it through tollgate explore)")

// TestSystematicList: the generated set is a fixed list of distinct names,
// each found by Lookup and each a program the explorer can run, with 2–3
// threads of 1–3 operations; the held-back ones are found by name too and
// are not in the list.
func TestSystematicList(t *testing.T) {
	sys := Systematic()
	again := Systematic()
	seen := map[string]bool{}
	count := map[Primitive]int{}
	for i, s := range sys {
		if again[i].Name != s.Name {
			t.Fatalf("Systematic is not a fixed list: %s, then %s", s.Name, again[i].Name)
		}
		if seen[s.Name] {
			t.Errorf("%s twice", s.Name)
		}
		seen[s.Name] = true
		count[s.Primitive]++
		if !strings.HasPrefix(s.Name, map[Primitive]string{Credits: "sys-cr-", TokenBucket: "sys-tb-"}[s.Primitive]) {
			t.Errorf("%s: a %s scenario", s.Name, s.Primitive)
		}
		if got, ok := Lookup(s.Name); !ok || got.Name != s.Name {
			t.Errorf("Lookup(%s) does not find it", s.Name)
		}
		if _, err := s.program(fault.None); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if n := s.Threads(); n < 2 || n > 3 {
			t.Errorf("%s: %d threads", s.Name, n)
		}
		if s.cr != nil {
			for _, th := range s.cr.threads {
				if len(th) < 1 || len(th) > 3 {
					t.Errorf("%s: a thread of %d operations", s.Name, len(th))
				}
			}
		}
	}
	for name := range Held() {
		if seen[name] {
			t.Errorf("held-back %s is in Systematic", name)
		}
		if _, ok := Lookup(name); !ok {
			t.Errorf("held-back %s is not found by name", name)
		}
	}
	if _, ok := Lookup("sys-cr-no-such"); ok {
		t.Error("Lookup found a systematic scenario that is not made")
	}
	t.Logf("%d credit-table, %d token-bucket scenarios; %d held back", count[Credits], count[TokenBucket], len(Held()))
}

// TestSystematicRealCode (with -explore.long): every generated scenario
// passes on the real code at bound 2. TestCoverageTable runs them all at
// bound 1 on every go test; tollgate explore (CI) runs them at bound 2.
func TestSystematicRealCode(t *testing.T) {
	if !*generatedLong {
		t.Skip("with -explore.long; TestCoverageTable explores every generated scenario at bound 1")
	}
	schedules := 0
	for _, s := range Systematic() {
		r := Explore(s, Options{Bound: 2})
		if r.Err != nil || r.Failure != nil || !r.Exhaustive {
			t.Errorf("%s: %s", s.Name, r.Summary())
			if r.Failure != nil {
				t.Log(r.Failure.Report())
			}
		}
		schedules += r.Schedules
	}
	t.Logf("%d scenarios, %d schedules at bound 2", len(Systematic()), schedules)
}

// TestGenerateDeterministic: a seed makes the same scenario every time
// (its runs have the same outcome).
func TestGenerateDeterministic(t *testing.T) {
	for _, p := range []Primitive{Credits, TokenBucket} {
		for seed := uint64(0); seed < 20; seed++ {
			a, b := Generate(p, seed), Generate(p, seed)
			ra, err := Replay(a, fault.None, "")
			if err != nil {
				t.Fatal(err)
			}
			rb, _ := Replay(b, fault.None, "")
			if ra.Outcome != rb.Outcome || ra.Trace != rb.Trace || a.Name != b.Name {
				t.Fatalf("%s: two different scenarios of one seed:\n%s\n%s", a.Name, ra.Outcome, rb.Outcome)
			}
			if s, ok := Lookup(a.Name); !ok || s.Threads() != a.Threads() || s.Ops() != a.Ops() {
				t.Errorf("Lookup(%s) does not make it", a.Name)
			}
		}
	}
}

// TestGenerateReachesItsBlindSpots: among the first seeds, some credit
// scenario has a holder reserve the slot it held last, which commits with
// the 64-bit compare-and-swap of the row's low half, and some token-bucket
// scenario reclaims and compacts a node (a frozen word in its trace).
func TestGenerateReachesItsBlindSpots(t *testing.T) {
	returning, compacts := 0, 0
	for seed := uint64(0); seed < 40; seed++ {
		rc, err := Replay(Generate(Credits, seed), fault.None, "")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(rc.Trace, "reserve: cas slots[30].word.lo: free") {
			returning++
		}
		rt, err := Replay(Generate(TokenBucket, seed), fault.None, "")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(rt.Trace, "→ frozen(") {
			compacts++
		}
	}
	if returning == 0 || compacts == 0 {
		t.Errorf("of 40 seeds, %d have a returning holder's reserve and %d a compaction: want some of each", returning, compacts)
	}
	t.Logf("of 40 seeds: %d returning holders' reserves, %d compactions", returning, compacts)
}

// TestTwinsContinued: the twin race continued (crTwinsOn) is made from
// exactly the prefixes whose reservation its holder can still enqueue
// (the model's answer to an enqueue right after the setup is ok), and from
// each of them for every ordered pair of crTwins: the second twin's thread
// enqueues then runs A, the third thread runs B.
func TestTwinsContinued(t *testing.T) {
	sys := map[string]Scenario{}
	for _, s := range Systematic() {
		sys[s.Name] = s
	}
	for _, p := range crPrefixes() {
		var m model.Credits[string]
		env := CrEnv{}
		for _, st := range p.setup {
			in, ok := st(env)
			if !ok {
				t.Fatalf("%s: a setup step is skipped", p.name)
			}
			var out model.CrOutput[string]
			m, out = m.Step(in)
			env.Setup = append(env.Setup, out)
		}
		in, ok := crOp("enqueue", p, 0, 0)[0](env)
		_, out := m.Step(in)
		enqueues := ok && out.Result == model.OK
		if enqueues != crTwinsOn[p.name] {
			t.Errorf("prefix %s: its holder's enqueue answers %v after the setup, but crTwinsOn[%s] = %v", p.name, out.Result, p.name, crTwinsOn[p.name])
		}
		for _, a := range crTwins {
			for _, b := range crTwins {
				name := "sys-cr-" + p.name + "-enqueue-enqueue+" + a + "-" + b
				s, made := sys[name]
				if made != crTwinsOn[p.name] {
					t.Errorf("%s: made %v, want %v", name, made, crTwinsOn[p.name])
				}
				if !made {
					continue
				}
				if th := s.cr.threads; len(th) != 3 || len(th[0]) != 1 || len(th[1]) != 2 || len(th[2]) != 1 {
					t.Errorf("%s: not the threads enqueue | enqueue, %s | %s", name, a, b)
				}
			}
		}
	}
}

// TestAnswersDrawn: the generated token-bucket set draws admit and
// retry_after so that each answers both ways: run one thread after the
// other on the model, in either order, some admit is admitted and some is
// refused with a wait, some retry_after answers 0 and some a wait, and
// every prefix of k's bucket word (answers) races each with every
// operation of tbOps in both orders of the threads.
func TestAnswersDrawn(t *testing.T) {
	seen := map[string]int{}
	sys := map[string]bool{}
	for _, s := range Systematic() {
		sys[s.Name] = true
		if s.tb == nil || len(s.tb.threads) != 2 {
			continue
		}
		for _, order := range [][]int{{0, 1}, {1, 0}} {
			countAnswers(s.tb, order, seen)
		}
	}
	for _, k := range []string{"admitted", "refused with a wait", "retry_after 0", "retry_after a wait"} {
		if seen[k] == 0 {
			t.Errorf("no generated scenario has an answer %s", k)
		}
	}
	t.Logf("answers over both serial orders: %v", seen)
	for _, p := range tbPrefixes() {
		if !p.answers {
			continue
		}
		for _, a := range tbAnswers {
			for _, op := range tbOps {
				if tbReadOnly[a] && tbReadOnly[op] {
					continue // two read-only ones race nothing
				}
				for _, name := range []string{"sys-tb-" + p.name + "-" + op + "-" + a, "sys-tb-" + p.name + "-" + a + "-" + op} {
					if !sys[name] {
						t.Errorf("%s is not made", name)
					}
				}
			}
		}
	}
}

// countAnswers runs sc's setup, then its threads one after the other in
// order, on the model, and counts in seen how its admits and retry_afters
// answered.
func countAnswers(sc *tbScript, order []int, seen map[string]int) {
	var m model.TBTable[string]
	for _, in := range sc.setup {
		m, _ = m.Step(in)
	}
	for _, th := range order {
		for _, in := range sc.threads[th] {
			var out model.TBOutput
			m, out = m.Step(in)
			switch {
			case in.Kind == model.TBAdmit && out.OK:
				seen["admitted"]++
			case in.Kind == model.TBAdmit && out.RetryAfterMs > 0:
				seen["refused with a wait"]++
			case in.Kind == model.TBRetryAfter && out.RetryAfterMs == 0:
				seen["retry_after 0"]++
			case in.Kind == model.TBRetryAfter && out.RetryAfterMs > 0:
				seen["retry_after a wait"]++
			}
		}
	}
}

// TestSlowAnswersSeeTornWords: in the slow prefix's pairs of a take and an
// answer, the take changes both halves of k's bucket word, so a word read
// as the tokens of the state after the take and the timestamp of the state
// before it (or the other way round) gives an answer that neither state
// gives: the wait of a refused admit (above 0, or the admit takes again)
// or of retry_after computed from a torn read is then wrong on the model,
// whichever thread's clock the take has. At a token a millisecond
// (tbSlowLim says why) that holds for retry_after but for admit only in
// one prefix and one direction of the tear; the test logs those pairs.
func TestSlowAnswersSeeTornWords(t *testing.T) {
	torn := func(p tbPrefix, lim model.Limits) map[string]bool {
		seen := map[string]bool{}
		for _, a := range tbAnswers {
			for _, ops := range [][]string{{a, "take"}, {"take", a}} {
				g := tbGenerated(p, ops, []string{genKey, genKey}, lim)
				var m model.TBTable[string]
				for _, in := range g.tb.setup {
					m, _ = m.Step(in)
				}
				ta := slices.Index(ops, "take")
				before := m.Bucket(genKey)
				m, _ = m.Step(g.tb.threads[ta][0])
				after := m.Bucket(genKey)
				ask := g.tb.threads[1-ta][0]
				if _, out := model.StepBucket(before, ask); a == "admit" && out.OK {
					continue // an admit admitted before the take reads no wait
				}
				ask.Kind = model.TBRetryAfter
				wait := func(b model.Bucket) int64 { _, out := model.StepBucket(b, ask); return out.RetryAfterMs }
				for _, mixed := range []model.Bucket{
					{Present: true, Tokens: after.Tokens, LastMs: before.LastMs},
					{Present: true, Tokens: before.Tokens, LastMs: after.LastMs},
				} {
					// An admit whose wait comes out 0 takes again: only a
					// wait above 0 is an answer.
					if w := wait(mixed); w != wait(before) && w != wait(after) && (w > 0 || a != "admit") {
						seen[p.name+": "+strings.Join(ops, "-")] = true
					}
				}
			}
		}
		return seen
	}
	slow := torn(tbSlow, tbSlowLim)
	for _, a := range tbAnswers {
		for _, ops := range []string{a + "-take", "take-" + a} {
			if !slow["slow: "+ops] {
				t.Errorf("sys-tb-slow-%s: no torn reading of k's word answers a wait neither state gives", ops)
			}
		}
	}
	var fast []string
	for _, p := range tbPrefixes() {
		if p.answers {
			fast = append(fast, slices.Sorted(maps.Keys(torn(p, model.Limits{})))...)
		}
	}
	t.Logf("pairs of a take and an answer where a torn word answers wrong: slow prefix %d of 4, the other answer prefixes %d: %v", len(slow), len(fast), fast)
}
