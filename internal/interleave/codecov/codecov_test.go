package codecov

import (
	"strings"
	"testing"
)

// A profile of toy.go in which the Inc's second if never ran.
const profile = `mode: set
example.com/m/internal/mutants/explored/toy/toy.go:5.30,6.8 1 1
example.com/m/internal/mutants/explored/toy/toy.go:6.8,8.3 1 1
example.com/m/internal/mutants/explored/toy/toy.go:9.2,9.9 1 1
example.com/m/internal/mutants/explored/toy/toy.go:9.9,11.3 1 0
example.com/m/internal/mutants/explored/toy/toy.go:12.2,12.12 1 1
example.com/m/internal/other/other.go:1.1,2.2 1 0
`

func parse(t *testing.T, p string) []Block {
	t.Helper()
	bs, err := Parse(strings.NewReader(p), "testdata/mod", "example.com/m", []string{"/internal/mutants/explored/"})
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func TestParseNamesBlocks(t *testing.T) {
	bs := parse(t, profile)
	if len(bs) != 5 {
		t.Fatalf("%d blocks, want 5 (the other package's left out)", len(bs))
	}
	b := bs[3]
	if b.Covered || b.Func != "T.Inc" || b.Source != "{ t.n-- }" || b.Key() != "T.Inc: { t.n-- }" {
		t.Fatalf("block 4: %+v key %q", b, b.Key())
	}
}

func TestTableJudges(t *testing.T) {
	bs := parse(t, profile)
	md, v := Table(bs, Reasons{}, "test")
	if v.OK() || len(v.Unexplained) != 1 {
		t.Fatalf("an unreached block without a reason passed: %+v", v)
	}
	if !strings.Contains(md, "4 of 5 blocks reached") || !strings.Contains(md, "no reason given") {
		t.Fatalf("table:\n%s", md)
	}
	_, v = Table(bs, Reasons{"T.Inc: { t.n-- }": "never false here"}, "test")
	if !v.OK() {
		t.Fatalf("explained, still judged: %+v", v)
	}
	_, v = Table(bs, Reasons{"T.Inc: { t.n-- }": "x", "T.Inc: return t.n": "stale"}, "test")
	if len(v.Stale) != 1 {
		t.Fatalf("a reason for a reached block was not called stale: %+v", v)
	}
	// A block reached in any counter file is reached.
	bs = parse(t, profile+"example.com/m/internal/mutants/explored/toy/toy.go:9.9,11.3 1 1\n")
	if _, v = Table(bs, Reasons{}, "test"); !v.OK() {
		t.Fatalf("a block counted in a second file is not reached: %+v", v)
	}
}

func TestReadReasons(t *testing.T) {
	r, err := ReadReasons(strings.NewReader("# comment\n\nA: x\twhy\n"))
	if err != nil || r["A: x"] != "why" {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := ReadReasons(strings.NewReader("A: x\n")); err == nil {
		t.Fatal("a line without a reason was accepted")
	}
	if _, err := ReadReasons(strings.NewReader("A\tx\nA\ty\n")); err == nil {
		t.Fatal("a key listed twice was accepted")
	}
}
