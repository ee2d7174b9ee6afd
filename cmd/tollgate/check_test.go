package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// TestCheckRealTables: a short check of both primitives passes and prints
// the summary table. By default it records for half a second (about ten
// histories of each primitive on a loaded 2-core machine), which is what
// the command's output needs; the check of every workload of the real
// tables is linearizability's TestShortTokenBucket and TestShortCredits.
// The long run (testlong) records for 2 s, as before.
func TestCheckRealTables(t *testing.T) {
	duration := "500ms"
	if testlong.Enabled() {
		duration = "2s"
	}
	var out, errb bytes.Buffer
	code := runCheck([]string{"-duration", duration, "-seed", "1", "-out", t.TempDir()}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"primitive", "tokenbucket", "credits", "porcupine", "sequential", "breaks", "result: Ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The sequential rows count operations, like the porcupine rows: a
	// whole number in the operations column, no byte counts, and no unknown
	// or overlapping operations.
	seq := regexp.MustCompile(`(?m)^\s*(tokenbucket|credits)\s+sequential\s+(\d+)\s+(\d+)\s+-\s+-\s+Ok\s+-\s`).FindAllStringSubmatch(out.String(), -1)
	if len(seq) != 2 || strings.Contains(out.String(), " B ") {
		t.Fatalf("sequential rows are not histories, operations, -, -, Ok, -:\n%s", out.String())
	}
	for _, m := range seq {
		if h, ops := atoi(t, m[2]), atoi(t, m[3]); ops < h {
			t.Errorf("%s: %d operations in %d inputs", m[1], ops, h)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCheckNamesTheInvariant: a failing check names the invariant in the
// failure report and in the summary: the sequential row the ID the
// differential machine reports (model.TBDivergence for an answer that
// differs), the porcupine row T11 or C16.
func TestCheckNamesTheInvariant(t *testing.T) {
	build.Need(t)
	for _, c := range []struct{ mutant, seq, lin string }{
		// Seed 2's first answer that differs is an admit's wait, computed
		// from the timestamp the mutant moved back (T7).
		{"tb-timestamp-regress", "T7", "T11"},
		{"cr-release-no-holder", "C9", "C16"},
	} {
		t.Run(c.mutant, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runCheck([]string{"-duration", "10s", "-seed", "2", "-mutant", c.mutant, "-seq-share", "0.2", "-progress", "0", "-out", t.TempDir()}, &out, &errb)
			if code != exitIllegal {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitIllegal, out.String(), errb.String())
			}
			for _, want := range []string{
				"FAILED (random input", "), breaks " + c.seq + ":", "breaks " + c.lin + ": porcupine",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			for check, id := range map[string]string{"sequential": c.seq, "porcupine": c.lin} {
				if !regexp.MustCompile(`(?m)^\s*\w+\s+` + check + `\s+\d+\s+\d+\s+\S+\s+\S+\s+Illegal\s+` + id + `\s`).MatchString(out.String()) {
					t.Errorf("the %s row does not say Illegal %s:\n%s", check, id, out.String())
				}
			}
		})
	}
}

// TestCheckMutant: --mutant makes the check fail with a visualization, the
// raw history and a replay command, and the replay fails the same way.
func TestCheckMutant(t *testing.T) {
	build.Need(t)
	for _, m := range []string{"tb-plain-store", "cr-reserve-no-cas"} {
		t.Run(m, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runCheck([]string{"-duration", "20s", "-seed", "1", "-mutant", m, "-seq-share", "0", "-out", t.TempDir()}, &out, &errb)
			if code != exitIllegal {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitIllegal, out.String(), errb.String())
			}
			html := regexp.MustCompile(`visualization: (\S+\.html)`).FindStringSubmatch(out.String())
			js := regexp.MustCompile(`history: +(\S+\.json)`).FindStringSubmatch(out.String())
			if html == nil || js == nil || !strings.Contains(out.String(), "--replay "+js[1]) {
				t.Fatalf("paths or replay command missing:\n%s", out.String())
			}
			for _, p := range []string{html[1], js[1]} {
				if st, err := os.Stat(p); err != nil || st.Size() == 0 {
					t.Fatalf("%s: %v", p, err)
				}
			}
			out.Reset()
			if code := runCheck([]string{"-replay", js[1]}, &out, &errb); code != exitIllegal {
				t.Fatalf("replay exit %d, want %d\n%s%s", code, exitIllegal, out.String(), errb.String())
			}
		})
	}
}

// TestCheckFlags: bad flags are usage errors naming the flag.
func TestCheckFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-primitive", "semaphore"},
		{"-mutant", "no-such-mutant"},
		{"-primitive", "credits", "-mutant", "tb-plain-store"},
		{"-seq-share", "1"},
		{"stray"},
	} {
		var out, errb bytes.Buffer
		if code := runCheck(args, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(errb.String(), "check:") {
			t.Errorf("%v: error %q lacks the check: prefix", args, errb.String())
		}
	}
}

// TestCheckUnknownIsNotAPass: a checker timeout is reported as Unknown with
// its own exit code, never as Ok. The history is made, not recorded, so
// that the search is certain to outlast the timeout: 40 overlapping takes
// of one key, 39 of them with unknown outcomes and costs whose sums all
// differ, and one answered with a remainder no order gives, which
// porcupine can refute only by trying the subsets of the others (a
// recorded history whose calls happened not to overlap would be checked
// in no time, and pass).
func TestCheckUnknownIsNotAPass(t *testing.T) {
	lim := model.Limits{Capacity: 1000, RefillPerSecond: 1}
	take := func(i int) model.TBInput[string] {
		return model.TBInput[string]{Kind: model.TBTake, Key: "k", Limits: lim, Cost: 1 + math.Sqrt(float64(i+2))/10, NowMs: 0}
	}
	h := linearizability.TBHistory{Ops: []linearizability.TBOp{{Client: 0, Input: take(0),
		Output: model.TBOutput{OK: true, Remaining: 0.125}, Call: 0, Return: 1000}}}
	for i := 1; i < 40; i++ {
		h.Ops = append(h.Ops, linearizability.TBOp{Client: i, Input: take(i), Unknown: true, Call: int64(i)})
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runCheck([]string{"-replay", path, "-timeout", "1ms"}, &out, &errb)
	if code != exitUnknown || !strings.Contains(out.String(), "Unknown") {
		t.Fatalf("exit %d, want %d (Unknown)\n%s%s", code, exitUnknown, out.String(), errb.String())
	}
}

// TestSoakPlanFromTheSeed: -soak-plan prints the same windows for one
// seed twice, and other windows for another seed, on each backend; no
// server is started.
func TestSoakPlanFromTheSeed(t *testing.T) {
	plan := func(backend, seed string) string {
		var out, errb bytes.Buffer
		if code := runCheck([]string{"-backend", backend, "-seed", seed, "-soak-plan", "20"}, &out, &errb); code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
		}
		// The windows, without the header naming the seed.
		_, windows, _ := strings.Cut(out.String(), "\n")
		return windows
	}
	for _, b := range []string{"redis", "redis-cluster", "etcd"} {
		one, again, other := plan(b, "5"), plan(b, "5"), plan(b, "6")
		if one != again {
			t.Errorf("%s: seed 5 drew two plans:\n%s\n%s", b, one, again)
		}
		if one == other {
			t.Errorf("%s: seeds 5 and 6 drew one plan:\n%s", b, one)
		}
		if n := strings.Count(one, "window "); n != 20 {
			t.Errorf("%s: %d windows printed, want 20:\n%s", b, n, one)
		}
	}
	var out, errb bytes.Buffer
	if code := runCheck([]string{"-backend", "memory", "-soak", "1m"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "-soak needs -backend") {
		t.Errorf("a soak of the memory backend: exit %d, %s", code, errb.String())
	}
}
