package targets

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestMarkdown: the verdict table says when PCT's seeds disagree, gives
// DFS's schedule and preemptions, and marks a tooth no scenario found.
func TestMarkdown(t *testing.T) {
	runs := []Run{
		{Target: "xtime", Version: "v0.16.0", Verdicts: []Verdict{
			{Scenario: "allow-stale", Strategy: "dfs", Bound: 2, Verdict: "VIOLATED", Kind: "linearizability", Preemptions: 1, Schedule: "0x2.1x4", Schedules: 51},
			{Scenario: "allow-stale", Strategy: "pct", Seed: 1, Verdict: "VIOLATED"},
			{Scenario: "allow-stale", Strategy: "pct", Seed: 2, Verdict: "holds"},
			{Scenario: "allow-frozen", Strategy: "dfs", Bound: 2, Verdict: "holds", Exhaustive: true, Schedules: 78, Seconds: 0.001},
			{Scenario: "allow-frozen", Strategy: "pct", Seed: 1, Verdict: "holds"},
			{Scenario: "allow-frozen", Strategy: "pct", Seed: 2, Verdict: "holds"},
			{Scenario: "four-threads", Strategy: "dfs", Bound: 1, Verdict: "holds", Exhaustive: true, Schedules: 10},
			{Scenario: "needs-ctx", Strategy: "dfs", Verdict: "not run", Detail: "needs context control: a channel closed by code the explorer does not control"},
		}},
		{Target: "xtime", Version: "v0.16.0", Tooth: "unlock-early", Verdicts: []Verdict{
			{Scenario: "allow-frozen", Strategy: "dfs", Bound: 2, Verdict: "holds"},
		}},
	}
	var b bytes.Buffer
	Markdown(&b, runs, "tollgate explore -targets xtime")
	md := b.String()
	for _, want := range []string{
		"| v0.16.0 | allow-stale | **VIOLATED** (linearizability) | 1 | `0x2.1x4` | 1: VIOLATED, 2: holds |",
		"| v0.16.0 | allow-frozen | holds, exhaustive (78 schedules) |  |  | holds ×2 |",
		"| unlock-early | v0.16.0 | **not found** (no scenario) |",
		"| v0.16.0 | four-threads | holds, exhaustive (10 schedules, bound 1) |",
		"| v0.16.0 | needs-ctx | not run: needs context control: a channel closed by code the explorer does not control |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lacks %q:\n%s", want, md)
		}
	}
}

// TestEveryTargetHasScenarios: each target's scenarios are embedded, and
// every target's teeth name a patch.
func TestEveryTargetHasScenarios(t *testing.T) {
	for _, tg := range All {
		entries, err := files.ReadDir("testdata/" + tg.Name)
		if err != nil {
			t.Errorf("%s: no scenarios: %v", tg.Name, err)
			continue
		}
		tests := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "_test.go") {
				tests++
			}
		}
		if tests == 0 {
			t.Errorf("%s: testdata/%s has no _test.go file", tg.Name, tg.Name)
		}
		if len(tg.Teeth()) == 0 {
			t.Errorf("%s: no teeth (testdata/%s/teeth/*.patch)", tg.Name, tg.Name)
		}
	}
}

// TestTeethApply: every tooth of a module target applies to the newest
// version (patch --dry-run on the module as the proxy serves it).
func TestTeethApply(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch is not installed (apt-get install patch)")
	}
	for _, tg := range All {
		if tg.Module == "" {
			continue
		}
		v := tg.Versions[len(tg.Versions)-1]
		out, err := exec.Command("go", "mod", "download", "-json", tg.Module+"@"+v).Output()
		if err != nil {
			t.Errorf("go mod download %s@%s: %v", tg.Module, v, err)
			continue
		}
		var info struct{ Dir string }
		if err := json.Unmarshal(out, &info); err != nil {
			t.Fatal(err)
		}
		for _, tooth := range tg.Teeth() {
			patch, _ := files.ReadFile("testdata/" + tg.Name + "/teeth/" + tooth + ".patch")
			cmd := exec.Command("patch", "-p1", "--dry-run", "-d", info.Dir)
			cmd.Stdin = bytes.NewReader(patch)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s tooth %s does not apply to %s: %v\n%s", tg.Name, tooth, v, err, out)
			}
		}
	}
}

// TestMerge: a campaign replaces the runs it made again and keeps the
// others', in All's order.
func TestMerge(t *testing.T) {
	old := []Run{{Target: "xtime", Version: "v0.1.0"}, {Target: "semaphore", Version: "v0.18.0"}, {Target: "semaphore", Version: "v0.25.0", Err: "old"}, {Target: "xsync", Version: "v4.5.0"}}
	fresh := []Run{{Target: "semaphore", Version: "v0.25.0"}, {Target: "semaphore", Version: "v0.25.0", Tooth: "try-barges"}, {Target: "uber", Version: "v0.3.1"}}
	var got []string
	for _, r := range Merge(old, fresh) {
		got = append(got, r.Target+"@"+r.Version+"/"+r.Tooth+r.Err)
	}
	want := "xtime@v0.1.0/ uber@v0.3.1/ xsync@v4.5.0/ semaphore@v0.18.0/ semaphore@v0.25.0/ semaphore@v0.25.0/try-barges"
	if strings.Join(got, " ") != want {
		t.Errorf("Merge = %s, want %s", strings.Join(got, " "), want)
	}
	if n := strings.Join(Names(Merge(old, fresh)), ","); n != "xtime,uber,xsync,semaphore" {
		t.Errorf("Names = %s", n)
	}
}

// TestVerdictCellSaysWhereTheSearchWasCut: a DFS cut by the budget says so
// with the runs the budget counted (every bound's), not the last bound's
// schedules alone, which read like a whole search that stopped short; an
// exhaustive one and one of a single bound read as before.
func TestVerdictCellSaysWhereTheSearchWasCut(t *testing.T) {
	for _, tc := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Verdict: "holds", Bound: 2, Schedules: 78847, Total: 100000}, "holds (search cut after 100000 runs over bounds 0–2: 78847 schedules at bound 2)"},
		{Verdict{Verdict: "holds", Bound: 2, Schedules: 999, Total: 1300, Exhaustive: true}, "holds, exhaustive (999 schedules)"},
		{Verdict{Verdict: "holds", Bound: 1, Schedules: 500}, "holds (500 schedules, bound 1)"},
	} {
		if got := verdictCell(&tc.v, 2); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, tc.want)
		}
	}
}
