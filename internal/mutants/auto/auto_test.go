package auto

import (
	"go/parser"
	"go/token"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/testlong"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCampaignOnFixture runs a whole campaign on testdata/fixture, whose
// mutants' fates are known: a boundary mutant its test cannot see
// survives, one that loops forever is killed as a confirmed hang, one that
// fails a test and then hangs outside the mutated file is killed by the
// failure, the rest fail a test. The verdict names the survivor until it is listed,
// and a listed mutant that is not generated is stale.
func TestCampaignOnFixture(t *testing.T) {
	testlong.Skip(t)
	r := root(t)
	file := "internal/mutants/auto/testdata/fixture/fixture.go"
	res, err := Campaign(Config{Root: r, Files: []string{file}, Workers: 2,
		Layers: []Layer{{Name: "unit", Run: "."}}, MinTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fate := map[string]Outcome{}
	for _, o := range res.Outcomes {
		fate[o.Mutant.Func+" "+o.Mutant.Op+" "+o.Mutant.Orig+" "+o.Mutant.Repl] = o
		t.Logf("%-8s hang=%-5v %s  %s", o.Status, o.Hang, o.Mutant.ID(), o.Test)
	}
	if o := fate["Clamp boundary < <="]; o.Status != "survived" {
		t.Errorf("Clamp's `v < lo` → `v <= lo` (equivalent) was %s", o.Status)
	}
	if o := fate["Count incdec -- ++"]; o.Status != "killed" || !o.Hang || !strings.Contains(o.Test, "fixture.go") {
		t.Errorf("Count's `n--` → `n++` loops forever; want killed by a confirmed hang in fixture.go, got %+v", o)
	}
	if o := fate["Count incdec ++ --"]; o.Status != "killed" || o.Hang || o.Test != "TestCount" {
		t.Errorf("Count's `c++` → `c--` fails TestCount; got %+v", o)
	}
	if o := fate["Signal remove close(ch) "]; o.Status != "killed" || o.Hang || o.Test != "TestSignal" {
		t.Errorf("Signal's dropped close fails TestSignal before ExampleSignal hangs; want killed by TestSignal, got %+v", o)
	}
	if o := fate["Clamp negate > <="]; o.Status != "killed" || o.Test != "TestClamp" {
		t.Errorf("Clamp's `v > hi` → `v <= hi` fails TestClamp; got %+v", o)
	}
	unlisted, _ := res.Verdict(Equivalent{}, []string{file}, nil)
	if len(unlisted) == 0 {
		t.Fatal("no survivor reported unlisted")
	}
	eq := Equivalent{}
	for _, o := range unlisted {
		eq[o.Mutant.ID()] = "listed by the test"
	}
	if u, stale := res.Verdict(eq, []string{file}, nil); len(u) != 0 || len(stale) != 0 {
		t.Errorf("with every survivor listed: unlisted %v, stale %v", u, stale)
	}
	eq[file+" Clamp arith `+` → `-` #0"] = "not a mutant of the file"
	if _, stale := res.Verdict(eq, []string{file}, nil); len(stale) != 1 {
		t.Errorf("an entry for a mutant not generated is not reported stale: %v", stale)
	}
}

// TestSchemaTypeChecks: the schema of every file the campaign mutates,
// with every mutant compiled in, is Go that parses and type-checks, so the
// campaign's builds do not fail on it.
func TestSchemaTypeChecks(t *testing.T) {
	testlong.Skip(t)
	r := root(t)
	mod, err := modulePath(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"impl/credits", "impl/tokenbucket", "model"} {
		p, err := LoadPackage(r, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Files {
			ms, _, err := p.Generate(f)
			if err != nil {
				t.Fatal(err)
			}
			nums := make([]int, len(ms))
			for i := range nums {
				nums[i] = i + 1
			}
			src := Schema(mod, p.Source(f), ms, nums)
			if _, err := parser.ParseFile(token.NewFileSet(), f, src, 0); err != nil {
				t.Errorf("%s: the schema does not parse: %v", f, err)
				continue
			}
			if err := p.checkWith(f, src); err != nil {
				t.Errorf("%s: the schema does not type-check: %v", f, err)
			}
		}
	}
}

// TestEquivalentListParses: the committed lists of equivalent and of open
// mutants parse, no mutant is on both, and every entry names a file the
// campaign mutates.
func TestEquivalentListParses(t *testing.T) {
	eq, err := ReadEquivalent(root(t))
	if err != nil {
		t.Fatal(err)
	}
	open, err := ReadOpen(root(t))
	if err != nil {
		t.Fatal(err)
	}
	for id := range open {
		if _, both := eq[id]; both {
			t.Errorf("%s is listed both as equivalent and as open", id)
		}
		eq[id] = open[id]
	}
	for id := range eq {
		f, _, _ := strings.Cut(id, " ")
		if !strings.HasPrefix(f, "impl/") && !strings.HasPrefix(f, "model/") {
			t.Errorf("%s: not a file of impl/ or model/", id)
		}
	}
}

// TestListedMutantsAreGenerated: every entry of the lists of equivalent and
// of open mutants names a mutant its file still yields, under the operator
// set its operator belongs to. A rename in impl/ or model/ changes the IDs
// of the mutants it touches; an entry left under the old ID would never
// match a survivor again, and the campaign would call the survivor
// unlisted. (A campaign calls such entries stale too, but only for the
// files it mutates; this checks them all, without judging anything.)
func TestListedMutantsAreGenerated(t *testing.T) {
	r := root(t)
	lists := map[string]Equivalent{}
	var err error
	if lists[EquivalentFile], err = ReadEquivalent(r); err != nil {
		t.Fatal(err)
	}
	if lists[OpenFile], err = ReadOpen(r); err != nil {
		t.Fatal(err)
	}
	flag := map[OpSet]string{Classic: "", Concurrency: " -concurrency"}
	pkgs := map[string]*Package{}
	generated := map[string]map[string]bool{} // file + set → IDs
	// Only the listed stems are generated (GenerateSetOf): type-checking
	// every candidate of every file took 4 s of the test's 5.
	stems := map[string]bool{}
	for _, name := range []string{EquivalentFile, OpenFile} {
		for id := range lists[name] {
			if i := strings.LastIndex(id, " #"); i >= 0 {
				stems[id[:i]] = true
			}
		}
	}
	want := func(stem string) bool { return stems[stem] }
	for _, name := range []string{EquivalentFile, OpenFile} {
		for id := range lists[name] {
			f := strings.Fields(id)
			if len(f) < 3 {
				t.Errorf("%s: %s: no file, function and operator", name, id)
				continue
			}
			file, set := f[0], Classic
			if Concurrency.Has(f[2]) {
				set = Concurrency
			}
			k := file + " " + string(set)
			if generated[k] == nil {
				dir := path.Dir(file)
				if pkgs[dir] == nil {
					if pkgs[dir], err = LoadPackage(r, dir); err != nil {
						t.Fatal(err)
					}
				}
				ms, _, err := pkgs[dir].GenerateSetOf(file, set, want)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				generated[k] = map[string]bool{}
				for _, m := range ms {
					generated[k][m.ID()] = true
				}
			}
			if !generated[k][id] {
				t.Errorf("%s names a mutant %s no longer yields (renamed or gone; `tollgate mutants --auto%s -list -files %s` shows its mutants):\n\t%s", name, file, flag[set], file, id)
			}
		}
	}
}

// TestGenerateSetOfKeepsIDs: the mutants GenerateSetOf returns for half
// the stems of a file are exactly GenerateSet's mutants of those stems,
// IDs and all (a mutant's number counts only its own stem's mutants that
// type-check). It fails if the number counted across stems, or the
// filter dropped a wanted mutant.
func TestGenerateSetOfKeepsIDs(t *testing.T) {
	const file = "model/tokenbucket.go"
	p, err := LoadPackage(root(t), path.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	all, dropped, err := p.GenerateSet(file, Classic)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	wanted := map[string]bool{}
	for i, m := range all {
		if i%2 == 0 {
			wanted[m.Stem()] = true
		}
	}
	for _, m := range all {
		if wanted[m.Stem()] {
			want = append(want, m.ID())
		}
	}
	some, someDropped, err := p.GenerateSetOf(file, Classic, func(stem string) bool { return wanted[stem] })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range some {
		got = append(got, m.ID())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("GenerateSetOf gave %d mutants, GenerateSet %d of the same stems:\n%s\n-- want --\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) == 0 || len(want) == len(all) || someDropped > dropped {
		t.Fatalf("%d of %d mutants wanted, %d dropped of %d: not a test of the filter", len(want), len(all), someDropped, dropped)
	}
	t.Logf("%s: %d of %d mutants, %d of %d candidates dropped", file, len(want), len(all), someDropped, dropped)
}

// TestUnfinished: the tests a hang's -test.v output shows running are
// those started and not ended, subtests and parallel ones too.
func TestUnfinished(t *testing.T) {
	out := `=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
=== PAUSE TestB
=== RUN   TestC
=== RUN   TestC/one
    --- PASS: TestC/one (0.00s)
=== RUN   TestC/two
=== CONT  TestB
--- FAIL: TestD (0.00s)
SIGQUIT: quit
`
	if got, want := unfinished(out), "TestB, TestC, TestC/two"; got != want {
		t.Errorf("unfinished = %q, want %q", got, want)
	}
	if got := unfinished("panic: x\n"); got != "?" {
		t.Errorf("unfinished of no test = %q, want ?", got)
	}
}
