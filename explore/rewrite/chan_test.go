package rewrite

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChannelsRunAsWritten rewrites testdata/chanrun, a program of
// goroutines, channels and selects in many forms (named and directional
// channel types, comma-ok receives, a range, constants and nil sent in a
// select, go statements of a method value and of a variadic call, the
// panics of a closed channel), and runs it with no explorer: it must build
// and print exactly what it prints as written.
func TestChannelsRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "chanrun"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "main.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out, notes, changed, err := File(file, src)
	if err != nil {
		t.Fatal(err)
	}
	if !changed || len(notes) != 0 {
		t.Fatalf("changed %v, notes %v: want the file rewritten, every construct controlled", changed, noteStrings(notes))
	}
	for _, want := range []string{"tgrt_.Go(", "tgrt_.Send(", "tgrt_.Recv2(", "tgrt_.Range(", "tgrt_.NewSelect(", "tgrt_.SelValue(tgrt_s", "(int64)(5)", "(error)(nil)", "tgrt_.LenSend(", "tgrt_.Close("} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the rewrite has no %s:\n%s", want, out)
		}
	}
	// Every identifier stays on its line (the rewrite adds some and, in
	// a range, moves the variable into the loop's body, on the same line).
	after := map[string]int{}
	skip := map[string]bool{"sync": true, "close": true, "len": true}
	for _, id := range identLines(t, out, skip) {
		after[id]++
	}
	for _, id := range identLines(t, src, skip) {
		if after[id] == 0 {
			t.Errorf("%s is not on its line after the rewrite", id)
		}
		after[id]--
	}
	tmp := t.TempDir()
	rewritten := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(rewritten, out, 0o666); err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(tmp, "overlay.json")
	b, _ := json.Marshal(map[string]map[string]string{"Replace": {file: rewritten}})
	if err := os.WriteFile(overlay, b, 0o666); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command("go", append([]string{"run"}, append(args, "./testdata/chanrun")...)...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go run %v: %v\n%s\n%s", args, err, b, out)
		}
		return string(b)
	}
	want, got := run(), run("-overlay", overlay)
	if got != want {
		t.Errorf("rewritten, it prints\n%s\nas written\n%s", got, want)
	}
}

// TestChannelsBeforeGenerics: a file older than go1.18 cannot call rt's
// generic forms: its go statements, channel operations and selects keep
// their traps, and are noted.
func TestChannelsBeforeGenerics(t *testing.T) {
	src := `package p

func F(ch chan int) int {
	go func() { ch <- 1 }()
	select {
	case v := <-ch:
		return v
	}
}
`
	outs, notes, err := Package("p", "1.17", []Source{{testFilename, []byte(src)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(noteStrings(notes), "\n")
	for _, want := range []string{"4:2 go statement !", "4:14 channel send !", "5:2 select statement !"} {
		if !strings.Contains(got, want) {
			t.Errorf("no note %q in:\n%s", want, got)
		}
	}
	out := string(outs[0].Text)
	if strings.Contains(out, "tgrt_.Go(") || strings.Contains(out, "tgrt_.Send(") || strings.Count(out, "tgrt_.Unsupported(") != 3 {
		t.Errorf("want the constructs trapped, not rewritten:\n%s", out)
	}
}
