package main

import (
	"bytes"
	"strings"
	"testing"

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
	code, out, _ := run("-scenario", "cr-take-vs-finish,tb-take-vs-reset")
	if code != 0 || !strings.Contains(out, "yes (bound 2)") || !strings.Contains(out, "tb-take-vs-reset") {
		t.Fatalf("real code: exit %d\n%s", code, out)
	}
	code, out, _ = run("-scenario", "cr-take-vs-finish", "-mutant", "cr-finish-blind")
	if code != 1 || !strings.Contains(out, "linearizability violation") || !strings.Contains(out, "replay: tollgate explore") {
		t.Fatalf("mutant: exit %d\n%s", code, out)
	}
	i := strings.Index(out, "-replay ")
	sched := strings.Fields(out[i+len("-replay "):])[0]
	code, out, _ = run("-scenario", "cr-take-vs-finish", "-mutant", "cr-finish-blind", "-replay", sched)
	if code != 1 || !strings.Contains(out, "schedule "+sched) || !strings.Contains(out, "▶ finish") {
		t.Fatalf("replay %s: exit %d\n%s", sched, code, out)
	}
	code, out, _ = run("-scenario", "cr-take-vs-finish", "-replay", sched)
	if code != 0 || !strings.Contains(out, "no violation") {
		t.Fatalf("replay on the real code: exit %d\n%s", code, out)
	}
	code, out, _ = run("-scenario", "all", "-mutant", "tb-timestamp-regress", "-strategy", "pct", "-budget", "300")
	if code != 1 || strings.Contains(out, "cr-last-slot") || !strings.Contains(out, "tb-stale-clocks") {
		t.Fatalf("pct on a token-bucket mutant: exit %d\n%s", code, out)
	}
	code, out, _ = run("-scenario", "sys-cr-own-reserve-*", "-bound", "1")
	if code != 0 || !strings.Contains(out, "sys-cr-own-*") || !strings.Contains(out, "scenarios)") || strings.Contains(out, "sys-cr-own-reserve-reserve ") {
		t.Fatalf("generated, one line per prefix: exit %d\n%s", code, out)
	}
	code, out, _ = run("-scenario", "sys-cr-own-reserve-reserve,sys-tb-full-take-peek", "-bound", "1", "-v")
	if code != 0 || !strings.Contains(out, "sys-cr-own-reserve-reserve ") || !strings.Contains(out, "sys-tb-full-take-peek ") {
		t.Fatalf("generated, -v: exit %d\n%s", code, out)
	}
	code, out, _ = run("-scenario", "generated", "-mutant", "tb-peek-torn", "-bound", "1", "-failfast")
	if code != 1 || !strings.Contains(out, "violation in scenario sys-tb-") || strings.Contains(out, "sys-cr-") || strings.Count(out, "violation in scenario") != 1 {
		t.Fatalf("generated against a mutant, -failfast: exit %d\n%s", code, out)
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
	} {
		if code, _, _ := run(bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
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
