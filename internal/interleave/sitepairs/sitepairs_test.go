package sitepairs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStatic: every site is a seam operation of its line, in a function a
// caller of the table can reach, and the row word of the credit table is
// found under one name wherever it is reached.
func TestStatic(t *testing.T) {
	sites, err := Static(root(t))
	if err != nil {
		t.Fatal(err)
	}
	byWord := map[string]int{}
	text := map[string][]string{}
	for _, s := range sites {
		if text[s.File] == nil {
			b, err := os.ReadFile(filepath.Join(root(t), s.File))
			if err != nil {
				t.Fatal(err)
			}
			text[s.File] = strings.Split(string(b), "\n")
		}
		if line := text[s.File][s.Line-1]; !strings.Contains(line, s.Op) {
			t.Errorf("%s:%d: site %s is not on its line: %s", s.File, s.Line, s.Op, line)
		}
		if s.Func == "exportPairInline" || strings.HasSuffix(s.File, "/layout.go") {
			t.Errorf("%s:%d: %s is no operation of the table", s.File, s.Line, s.Func)
		}
		byWord[s.word()]++
	}
	for _, w := range []string{"credits.slot.word", "credits.slot.box", "tokenbucket.cell.word", "tokenbucket.node.first", "tokenbucket.cell.next", "tokenbucket.wrapper.value"} {
		if byWord[w] == 0 {
			t.Errorf("no site of %s; words found: %v", w, byWord)
		}
	}
}

// TestRender: a pair the run covered counts as covered, a reason that
// matches a covered pair or none is a problem, and an uncovered pair
// without a reason is open.
func TestRender(t *testing.T) {
	w := func(line int, op string, write bool, fn string) Site {
		return Site{File: "p/x.go", Line: line, Func: fn, Source: "w." + op + "()", Op: op, Type: "hooked.Uint64", Field: "p.T.w", Write: write}
	}
	load, store := w(1, "Load", false, "Get"), w(2, "Store", true, "Set")
	covered := map[[2]string]int{{"p/x.go:2", "p/x.go:1"}: 3}
	dir := t.TempDir()
	file := filepath.Join(dir, "reasons.txt")
	if err := os.WriteFile(file, []byte("# why\np.T.w | Set: * | Get: * :: covered, so stale\np.T.w | Nothing* | * :: matches nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadReasons(file)
	if err != nil {
		t.Fatal(err)
	}
	table, problems := Render([]Site{load, store}, covered, rs)
	if !strings.Contains(table, "1 of 3 ordered pairs covered; 0 not covered with a reason; 2 open.") {
		t.Errorf("table:\n%s", table)
	}
	if !strings.Contains(table, "p Get: w.Load() → p Set: w.Store(): open") || !strings.Contains(table, "p Set: w.Store() → p Set: w.Store(): open") {
		t.Errorf("the uncovered pairs are not open:\n%s", table)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "covered pair") || !strings.Contains(problems[1], "matches no pair") {
		t.Errorf("problems %q", problems)
	}
	if _, err := ReadReasons(filepath.Join(dir, "none.txt")); err == nil {
		t.Error("a missing reasons file read without error")
	}
	if err := os.WriteFile(file, []byte("p.T.w | Set :: no third pattern\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReasons(file); err == nil || !strings.Contains(err.Error(), "want") {
		t.Errorf("a malformed reason: %v", err)
	}
}
