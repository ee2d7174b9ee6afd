package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

func TestExploreCommand(t *testing.T) {
	build.Need(t)
	dir := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := runExplore(append(args, "-dir", dir, "-progress", "0"), &out, &errb)
		return code, out.String(), errb.String()
	}
	exploreRun{"real code", []string{"-scenario", "cr-take-vs-finish,tb-take-vs-reset"}, 0,
		[]string{"yes (bound 2)", "tb-take-vs-reset"}, nil}.check(t, run)
	out := exploreRun{"mutant", []string{"-scenario", "cr-take-vs-finish", "-mutant", "cr-finish-blind"}, 1,
		[]string{"linearizability violation", "replay: tollgate explore"}, nil}.check(t, run)
	i := strings.Index(out, "-replay ")
	sched := strings.Fields(out[i+len("-replay "):])[0]
	for _, r := range []exploreRun{
		{"replay " + sched, []string{"-scenario", "cr-take-vs-finish", "-mutant", "cr-finish-blind", "-replay", sched}, 1,
			[]string{"schedule " + sched, "▶ finish"}, nil},
		{"replay on the real code", []string{"-scenario", "cr-take-vs-finish", "-replay", sched}, 0,
			[]string{"no violation"}, nil},
		{"pct on a token-bucket mutant", []string{"-scenario", "all", "-mutant", "tb-timestamp-regress", "-strategy", "pct", "-budget", "30"}, 1,
			[]string{"tb-stale-clocks"}, []string{"cr-last-slot"}},
		{"generated, one line per prefix", []string{"-scenario", "sys-cr-own-reserve-*", "-bound", "1"}, 0,
			[]string{"sys-cr-own-*", "scenarios)"}, []string{"sys-cr-own-reserve-reserve "}},
		{"generated, -v", []string{"-scenario", "sys-cr-own-reserve-reserve,sys-tb-full-take-peek", "-bound", "1", "-v"}, 0,
			[]string{"sys-cr-own-reserve-reserve ", "sys-tb-full-take-peek "}, nil},
	} {
		r.check(t, run)
	}
	out = exploreRun{"generated against a mutant, -failfast", []string{"-scenario", "generated", "-mutant", "tb-peek-torn", "-bound", "1", "-failfast"}, 1,
		[]string{"violation in scenario sys-tb-"}, []string{"sys-cr-"}}.check(t, run)
	if n := strings.Count(out, "violation in scenario"); n != 1 {
		t.Fatalf("generated against a mutant, -failfast: %d violations reported, want 1\n%s", n, out)
	}
	for _, bad := range [][]string{
		{"-scenario", "sys-["},
		{"-scenario", "no-such-*"},
		{"-strategy", "bfs"},
		{"-scenario", "no-such"},
		{"-budget", "lots"},
		{"-scenario", "cr-last-slot", "-mutant", "tb-plain-store"},
		{"-replay", "0x1"},
		{"-scenario", "cr-last-slot", "-replay", "zz"},
		{"-backend", "redis"},
		{"-mutant", "etb-take-no-compare"},
		{"-backend", "etcd", "-mutant", "rtb-tostring"},
		{"-backend", "etcd", "-scenario", "cr-last-slot", "-mutant", "etb-take-no-compare"},
	} {
		if code, _, _ := run(bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// exploreRun is one run of the explore command in TestExploreCommand: its
// arguments, the exit code wanted, and what its output must and must not
// contain.
type exploreRun struct {
	what        string
	args        []string
	code        int
	has, hasNot []string
}

// check runs r, failing t unless the exit code and the output are as
// wanted, and returns the output.
func (r exploreRun) check(t *testing.T, run func(args ...string) (int, string, string)) string {
	t.Helper()
	code, out, _ := run(r.args...)
	ok := code == r.code
	for _, s := range r.has {
		ok = ok && strings.Contains(out, s)
	}
	for _, s := range r.hasNot {
		ok = ok && !strings.Contains(out, s)
	}
	if !ok {
		t.Fatalf("%s: exit %d\n%s", r.what, code, out)
	}
	return out
}

// -shard i/n splits the scenarios (catalogue, generated and directed) into
// n disjoint parts whose union is the whole run; a bad value exits 2 and
// says why. A directed run may replay a catalogue scenario: it is one run
// by its name and schedule.
func TestExploreShard(t *testing.T) {
	whole, err := parseExplore([]string{"-scenario", "all"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, sh := range []string{"1/3", "2/3", "3/3"} {
		c, err := parseExplore([]string{"-scenario", "all", "-shard", sh}, new(bytes.Buffer))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.scenarios {
			key := s.Name + "@" + s.Fixed()
			if seen[key] {
				t.Fatalf("%s is in two shards", key)
			}
			seen[key] = true
		}
	}
	if len(seen) != len(whole.scenarios) {
		t.Fatalf("the shards run %d scenarios, the whole run %d", len(seen), len(whole.scenarios))
	}
	for bad, msg := range map[string]string{
		"0/3": "explore: -shard 0/3: i must be in 1..n",
		"4/3": "explore: -shard 4/3: i must be in 1..n",
		"1/0": "explore: -shard 1/0: n must be",
		"2":   "explore: -shard 2: want i/n",
	} {
		var out, errb bytes.Buffer
		if code := runExplore([]string{"-shard", bad}, &out, &errb); code != 2 || !strings.Contains(errb.String(), msg) {
			t.Errorf("-shard %s: exit %d, %q; want 2 and %q", bad, code, errb.String(), msg)
		}
	}
}

// explore -procs 2 explores in worker processes (this test binary, started
// as the command) and prints the same table, in the same order, as the
// run in one process; only the times differ. At bound 1: the rows, their
// order and their counts are what the workers must reproduce, and bound 2
// (the default) cost 3.3 s of CPU against 0.9 s for the same comparison.
// With -site-pairs, the workers' pairs joined are the pairs, and the runs
// of each, that the one process counts.
func TestExploreProcs(t *testing.T) {
	workerEnv = []string{"TOLLGATE_TEST_AS_COMMAND=1"}
	defer func() { workerEnv = nil }()
	dir := t.TempDir()
	pairs := func(procs string) map[[2]string]int {
		f, err := os.Open(filepath.Join(dir, procs+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		p, err := interleave.ReadSitePairs(f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	table := func(procs string) string {
		var out, errb bytes.Buffer
		sel := "cr-last-slot,cr-take-vs-finish,tb-admit-vs-take,tb-stale-clocks,sys-cr-own-reserve-*"
		if code := runExplore([]string{"-scenario", sel, "-bound", "1", "-progress", "0", "-v", "-procs", procs,
			"-site-pairs", filepath.Join(dir, procs+".txt")}, &out, &errb); code != explorePass {
			t.Fatalf("-procs %s: exit %d\n%s%s", procs, code, out.String(), errb.String())
		}
		var rows []string
		for _, l := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(l); len(f) > 1 {
				rows = append(rows, strings.Join(f[:len(f)-1], " ")) // the time column left out
			}
		}
		return strings.Join(rows, "\n")
	}
	one, two := table("1"), table("2")
	if one != two {
		t.Fatalf("-procs 2 printed\n%s\n\n-procs 1 printed\n%s", two, one)
	}
	if p1, p2 := pairs("1"), pairs("2"); len(p1) == 0 || !maps.Equal(p1, p2) {
		t.Fatalf("-site-pairs: %d pairs with -procs 1, %d with -procs 2, or their runs differ", len(p1), len(p2))
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "tollgate-site-pairs-*")); len(left) > 0 {
		t.Fatalf("the workers' pair files were left behind: %v", left)
	}
	if !strings.Contains(one, "cr-take-vs-finish") || !strings.Contains(one, "sys-cr-own-reserve") {
		t.Fatalf("the table misses scenarios:\n%s", one)
	}
}
