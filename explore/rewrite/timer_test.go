package rewrite

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimersRunAsWritten rewrites testdata/timerrun, a program of
// timers, tickers and contexts (Stop and Reset of a timer in a field, of
// a ticker, every context function the rewrite sends to a twin), and runs
// it with no explorer: it must build and print what it prints as written.
func TestTimersRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "timerrun"))
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
	for _, want := range []string{"tgrt_.NewTimer(", "tgrt_.TimerStop(t)", "tgrt_.TimerReset(t, ", "tgrt_.TimerStop((*tgrt_.PlainLoad(&j.t)))", "tgrt_.TimerStopFunc(t)", "tgrt_.TimerStop(t))",
		"tgrt_.After(", "tgrt_.AfterFunc(", "tgrt_.NewTicker(", "tgrt_.TickerReset(tk, ", "tgrt_.TickerStop(tk)", "tgrt_.Tick(",
		"tgrt_.WithCancelCause(", "tgrt_.WithTimeout(", "tgrt_.ContextAfterFunc(", "tgrt_.Cause(", "tgrt_.WithDeadline(",
		"tgrt_.WithTimeoutCause(", "tgrt_.WithDeadlineCause("} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the rewrite has no %s:\n%s", want, out)
		}
	}
	checkLines(t, string(src), out)
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
		cmd := exec.Command("go", append([]string{"run"}, append(args, "./testdata/timerrun")...)...)
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
	t.Logf("%s", got)
}
