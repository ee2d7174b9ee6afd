package limiters

import (
	"fmt"
	"strings"

	"github.com/tollgate/tollgate/internal/shard"
)

// An Expectation is one verdict a campaign must come out with (the
// -expect flag): the verdict of property Prop of workload Workload on
// version Version of library Module. Version "newest" names the newest
// version the campaign ran.
type Expectation struct {
	Module, Version, Workload, Prop string
	Verdict                         string
}

// Key is e as -expect writes it without its verdict:
// MODULE@VERSION:WORKLOAD:PROP.
func (e Expectation) Key() string { return Unit(e.Module, e.Version, e.Workload) + ":" + e.Prop }

// ParseExpect parses the value of -expect: expectations separated by
// commas, each MODULE@VERSION:WORKLOAD:PROP=VERDICT, e.g.
// golang.org/x/time@newest:tiny-rate:L1=holds. The empty string expects
// nothing. The error quotes the expectation it could not read.
func ParseExpect(s string) ([]Expectation, error) {
	if s == "" {
		return nil, nil
	}
	var want []Expectation
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		m, rest, at := strings.Cut(k, "@")
		f := strings.Split(rest, ":")
		if !ok || !at || len(f) != 3 {
			return nil, fmt.Errorf("%q must be MODULE@VERSION:WORKLOAD:PROP=VERDICT", part)
		}
		want = append(want, Expectation{Module: m, Version: f[0], Workload: f[1], Prop: f[2], Verdict: v})
	}
	return want, nil
}

// Mismatches compares the results of a campaign with want and describes,
// in want's order, each expectation that did not come out, with the verdict
// that did ("" for none). ran lists the versions the campaign ran of each
// module; "newest" is the newest of them and of the results' versions. An
// expectation whose unit (see Unit) is not in sh belongs to another shard's
// run and is not checked.
func Mismatches(want []Expectation, rs []Result, ran map[string][]string, sh shard.Shard) []string {
	got := map[string]string{}
	newest := newestVersions(rs, ran)
	for _, r := range rs {
		got[Unit(r.Library, r.Version, r.Workload)+":"+r.Prop] = r.Verdict
	}
	var bad []string
	for _, e := range want {
		v := e.Version
		if v == "newest" {
			v = newest[e.Module]
		}
		if v != "" && !sh.Has(Unit(e.Module, v, e.Workload)) {
			continue
		}
		if g := got[Unit(e.Module, v, e.Workload)+":"+e.Prop]; g != e.Verdict {
			bad = append(bad, fmt.Sprintf("%s=%s, got %q", e.Key(), e.Verdict, g))
		}
	}
	return bad
}

// newestVersions is the newest version of each module among those ran
// lists and those of rs.
func newestVersions(rs []Result, ran map[string][]string) map[string]string {
	newest := map[string]string{}
	newer := func(m, v string) {
		if n, ok := newest[m]; !ok || CompareVersions(v, n) > 0 {
			newest[m] = v
		}
	}
	for m, vs := range ran {
		for _, v := range vs {
			newer(m, v)
		}
	}
	for _, r := range rs {
		newer(r.Library, r.Version)
	}
	return newest
}

// Unexplained lists, in rs's order, each violation or error of rs that
// nothing accounts for: neither Classify (the readings of known library
// behaviour, limiters/known.go) nor an -expect verdict of want that names
// it as VIOLATED or error. Such a verdict is a finding nobody has read yet,
// and fails the campaign (as check fails on a violation); the explained
// ones are the campaign's known results. "newest" in want is resolved as
// Mismatches resolves it.
func Unexplained(want []Expectation, rs []Result, ran map[string][]string) []string {
	newest := newestVersions(rs, ran)
	expected := map[string]string{}
	for _, e := range want {
		v := e.Version
		if v == "newest" {
			v = newest[e.Module]
		}
		expected[Unit(e.Module, v, e.Workload)+":"+e.Prop] = e.Verdict
	}
	var out []string
	for _, r := range rs {
		if r.Verdict != Violated && r.Verdict != Failed {
			continue
		}
		key := Unit(r.Library, r.Version, r.Workload) + ":" + r.Prop
		if Classify(r) != "" || expected[key] == r.Verdict {
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s: %s", key, r.Verdict, r.Detail))
	}
	return out
}
