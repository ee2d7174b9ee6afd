package auto

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
)

// TestConcurrencyOperators: the concurrency operators make mutants of every
// kind at the atomic sites of the two tables, the ones a reader expects
// among them; every round's schema (Rounds) parses and type-checks with
// all of its mutants compiled in, opaque two-statement nodes included; and
// the explorer's copy of the schema marks a plain-store mutant's write as a
// plain store (hooked.PlainStore), so the explorer sees a plain write where
// the atomic one was.
func TestConcurrencyOperators(t *testing.T) {
	r := root(t)
	mod, err := modulePath(r)
	if err != nil {
		t.Fatal(err)
	}
	p, err := LoadPackage(r, "impl/credits")
	if err != nil {
		t.Fatal(err)
	}
	const file = "impl/credits/credits.go"
	ms, _, err := p.GenerateSet(file, Concurrency)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	ids := map[string]bool{}
	for _, m := range ms {
		ops[m.Op]++
		ids[m.ID()] = true
		if !Concurrency.Has(m.Op) || Classic.Has(m.Op) {
			t.Errorf("%s: not a concurrency operator", m.ID())
		}
	}
	// The credit table reads its words a half at a time; the token
	// bucket's cells are read whole, so cc-torn-load is looked for there.
	const tbFile = "impl/tokenbucket/tokenbucket.go"
	tp, err := LoadPackage(r, "impl/tokenbucket")
	if err != nil {
		t.Fatal(err)
	}
	tms, _, err := tp.GenerateSet(tbFile, Concurrency)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tms {
		ops[m.Op]++
		ids[m.ID()] = true
	}
	for _, op := range ConcurrencyOperators {
		if ops[op] == 0 {
			t.Errorf("no %s mutant of %s or %s", op, file, tbFile)
		}
	}
	for _, want := range []string{
		file + " Table.Take cc-one-attempt `` → `return zero, false` #0",
		file + " Table.exhausted cc-drop-recheck `t.slots[n-1].word.LoadLo()` → `seen[n-1]` #0",
		file + " Table.Take cc-plain-store `b.published.Store(true)` → `*automutActive.Word[bool](&b.published) = true` #0",
		file + " Table.Take cc-drop-epoch `b.gen == gen` → `true` #0",
		tbFile + " Table.Reset cc-torn-load `c.word.Load()` → `func() (uint64, uint64) { mHi := c.word.LoadHi(); return c.word.LoadLo(), mHi }()` #0",
		file + " Table.Take cc-hoist-load `if t.closed.Load() { return zero, false } lo := s.word.LoadLo()` → `lo := s.word.LoadLo() if t.closed.Load() { return zero, false }` #0",
	} {
		if !ids[want] {
			t.Errorf("missing %s", want)
		}
	}
	rounds := Rounds(ms)
	if len(rounds) < 2 {
		t.Errorf("%d rounds: the opaque nodes overlap others, so they need rounds of their own", len(rounds))
	}
	plain := false
	for k, idx := range rounds {
		sub := make([]Mutant, len(idx))
		nums := make([]int, len(idx))
		for j, i := range idx {
			sub[j], nums[j] = ms[i], i+1
		}
		src := Schema(mod, p.Source(file), sub, nums)
		if _, err := parser.ParseFile(token.NewFileSet(), file, src, 0); err != nil {
			t.Fatalf("round %d: the schema does not parse: %v", k+1, err)
		}
		if err := p.checkWith(file, src); err != nil {
			t.Fatalf("round %d: the schema does not type-check: %v", k+1, err)
		}
		ex, ok, err := generate.ExploredCopy(r, file, src)
		if err != nil || !ok {
			t.Fatalf("round %d: the explorer's copy of the schema: %v (a table file: %v)", k+1, err, ok)
		}
		if strings.Contains(string(ex.Data), "seam.PlainStore(automutActive.Word[bool](&b.published))") {
			plain = true
		}
	}
	if !plain {
		t.Error("no round's explored copy marks the plain store of b.published with seam.PlainStore")
	}
}
