package limiters

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/shard"
)

func TestParseExpect(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Expectation
	}{
		{"", nil},
		{"m@v0.1.0:w:L1=VIOLATED", []Expectation{{"m", "v0.1.0", "w", "L1", Violated}}},
		{"golang.org/x/time@newest:tiny-rate:L1=holds, go.uber.org/ratelimit@v0.3.0:idle-burst:L3=VIOLATED",
			[]Expectation{{"golang.org/x/time", "newest", "tiny-rate", "L1", Holds}, {"go.uber.org/ratelimit", "v0.3.0", "idle-burst", "L3", Violated}}},
		{"m@v:w:p=", []Expectation{{"m", "v", "w", "p", ""}}},
	} {
		got, err := ParseExpect(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseExpect(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		for i, e := range got {
			if k, _, _ := strings.Cut(strings.TrimSpace(strings.Split(c.in, ",")[i]), "="); e.Key() != k {
				t.Errorf("Key() = %q, want %q", e.Key(), k)
			}
		}
	}
	for _, in := range []string{
		"golang.org/x/time:steady=holds", // no version
		"m@v:w:p",                        // no verdict
		"m@v:w=holds",                    // no property
		"m@v:w:p:q=holds",                // one part too many
		"m:w@v:p=holds",                  // the version after the workload
		"m@v:w:p=holds,",                 // an empty expectation
	} {
		if _, err := ParseExpect(in); err == nil || !strings.Contains(err.Error(), "must be MODULE@VERSION:WORKLOAD:PROP=VERDICT") {
			t.Errorf("ParseExpect(%q) error = %v, want the form it must have", in, err)
		}
	}
}

// TestMismatches: each expectation against a campaign of three versions
// of m, where v0.10.0 is the newest (numerically, not as text).
func TestMismatches(t *testing.T) {
	rs := []Result{
		{Library: "m", Version: "v0.1.0", Workload: "w", Prop: "L1", Verdict: Violated},
		{Library: "m", Version: "v0.9.0", Workload: "w", Prop: "L1", Verdict: Violated},
		{Library: "m", Version: "v0.10.0", Workload: "w", Prop: "L1", Verdict: Holds},
	}
	ran := map[string][]string{"m": {"v0.1.0", "v0.9.0", "v0.10.0"}}
	for _, c := range []struct {
		name   string
		expect string
		rs     []Result
		ran    map[string][]string
		want   []string
	}{
		{"met", "m@v0.1.0:w:L1=VIOLATED,m@newest:w:L1=holds", rs, ran, nil},
		{"newest from the results alone", "m@newest:w:L1=holds", rs, nil, nil},
		{"wrong verdict", "m@v0.1.0:w:L1=holds", rs, ran, []string{`m@v0.1.0:w:L1=holds, got "VIOLATED"`}},
		{"newest broken", "m@newest:w:L1=VIOLATED", rs, ran, []string{`m@newest:w:L1=VIOLATED, got "holds"`}},
		{"no such check", "m@v0.1.0:w:L2=holds", rs, ran, []string{`m@v0.1.0:w:L2=holds, got ""`}},
		{"no such library", "n@newest:w:L1=holds", rs, ran, []string{`n@newest:w:L1=holds, got ""`}},
		{"in want's order", "m@v0.9.0:w:L1=holds,m@v0.1.0:w:L1=holds", rs, ran,
			[]string{`m@v0.9.0:w:L1=holds, got "VIOLATED"`, `m@v0.1.0:w:L1=holds, got "VIOLATED"`}},
		// A newest version that ran but had no results is still the newest.
		{"newest ran without results", "m@newest:w:L1=holds", rs, map[string][]string{"m": {"v0.11.0"}},
			[]string{`m@newest:w:L1=holds, got ""`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := ParseExpect(c.expect)
			if err != nil {
				t.Fatal(err)
			}
			if got := Mismatches(want, c.rs, c.ran, shard.Shard{}); !slices.Equal(got, c.want) {
				t.Errorf("Mismatches = %q, want %q", got, c.want)
			}
		})
	}
}

// TestMismatchesInAShard: a shard checks the expectations of its own units
// only, "newest" resolved from every version run, so the n shards of a
// campaign together check each expectation once.
func TestMismatchesInAShard(t *testing.T) {
	ran := map[string][]string{"m": {"v0.1.0", "v0.2.0"}}
	want, err := ParseExpect("m@v0.1.0:a:L1=holds,m@newest:b:L1=holds,m@v0.2.0:c:L2=holds,m@v0.1.0:d:L1=holds")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 4; n++ {
		checked := 0
		for i := 1; i <= n; i++ {
			sh := shard.Shard{I: i, N: n}
			// No results at all: every expectation this shard checks fails.
			checked += len(Mismatches(want, nil, ran, sh))
			var rs []Result
			for _, e := range want {
				v := strings.Replace(e.Version, "newest", "v0.2.0", 1)
				if sh.Has(Unit(e.Module, v, e.Workload)) {
					rs = append(rs, Result{Library: e.Module, Version: v, Workload: e.Workload, Prop: e.Prop, Verdict: e.Verdict})
				}
			}
			if bad := Mismatches(want, rs, ran, sh); len(bad) != 0 {
				t.Errorf("shard %v with its own results: %q", sh, bad)
			}
		}
		if checked != len(want) {
			t.Errorf("the %d shards checked %d expectations, want each of %d once", n, checked, len(want))
		}
	}
}

// TestUnexplained: a violation or error is explained by a reading of known
// behaviour or by an -expect verdict naming it (newest resolved); any other
// fails the campaign; a verdict that holds is never listed.
func TestUnexplained(t *testing.T) {
	rs := []Result{
		{Library: "golang.org/x/time", Version: "v0.9.0", Workload: "tiny-rate", Prop: "L1", Verdict: Violated},            // known.go reads it
		{Library: "golang.org/x/time", Version: "v0.16.0", Workload: "steady", Prop: "L1", Verdict: Violated, Detail: "x"}, // nothing does
		{Library: "golang.org/x/time", Version: "v0.16.0", Workload: "steady", Prop: "L2", Verdict: Holds},
		{Library: "go.uber.org/ratelimit", Version: "v0.3.1", Workload: "steady", Prop: "L3", Verdict: Failed, Detail: "panic"}, // -expect names it
	}
	ran := map[string][]string{"golang.org/x/time": {"v0.9.0", "v0.16.0"}, "go.uber.org/ratelimit": {"v0.3.1"}}
	want, err := ParseExpect("go.uber.org/ratelimit@newest:steady:L3=error")
	if err != nil {
		t.Fatal(err)
	}
	got := Unexplained(want, rs, ran)
	if len(got) != 1 || got[0] != "golang.org/x/time@v0.16.0:steady:L1=VIOLATED: x" {
		t.Fatalf("Unexplained = %q, want the one unread violation", got)
	}
	// An -expect of the other verdict does not explain it.
	want, _ = ParseExpect("golang.org/x/time@v0.16.0:steady:L1=holds")
	if got := Unexplained(want, rs, ran); len(got) != 2 {
		t.Errorf("Unexplained with a contrary -expect = %q, want both unread verdicts", got)
	}
}

// TestCommittedRunExplained: every violation of the committed every-version
// campaign (limiters/results/results.json) has a reading in known.go, so
// re-running it (scripts/limiters.sh) passes unless something new comes
// out.
func TestCommittedRunExplained(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("results", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	violated := 0
	for _, r := range rs {
		if r.Verdict == Violated || r.Verdict == Failed {
			violated++
		}
	}
	if violated == 0 {
		t.Fatalf("results.json holds no violation (%d results): the test checks nothing", len(rs))
	}
	if u := Unexplained(nil, rs, nil); len(u) > 0 {
		t.Errorf("%d of %d violations of the committed run have no reading in known.go:\n%s", len(u), violated, strings.Join(u, "\n"))
	}
}
