//go:build ignore

// summarize reads the raw rounds run.sh writes and prints, in markdown, the
// medians per build and design, the within-round ratios of client CPU per
// call (cpu-ns/op) with a Mann–Whitney test of the two designs' rounds
// (bench.MannWhitney, two-sided, p < bench.Alpha), and the targets.
//
//	go run bench/results/redis-client/summarize.go raw.txt > summary.md
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/bench"
)

// round is one benchmark line's figures.
type round struct{ ns, cpu, srv, bytes, allocs float64 }

// rounds[build][case/design][round number]
var rounds = map[string]map[string]map[int]round{}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run summarize.go raw.txt")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if err := parse(line); err != nil {
			fmt.Fprintf(os.Stderr, "%q: %v\n", line, err)
			os.Exit(1)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	report()
}

func parse(line string) error {
	fs := strings.Fields(line)
	if len(fs) < 4 || !strings.HasPrefix(fs[1], "r") {
		return fmt.Errorf("want <build> r<round> <benchmark line>")
	}
	r, err := strconv.Atoi(fs[1][1:])
	if err != nil {
		return err
	}
	name := strings.TrimPrefix(fs[2], "Benchmark")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		name = name[:i]
	}
	var x round
	for i := 4; i+1 < len(fs); i += 2 {
		v, err := strconv.ParseFloat(fs[i], 64)
		if err != nil {
			return err
		}
		switch fs[i+1] {
		case "ns/op":
			x.ns = v
		case "cpu-ns/op":
			x.cpu = v
		case "server-cpu-ns/op":
			x.srv = v
		case "B/op":
			x.bytes = v
		case "allocs/op":
			x.allocs = v
		}
	}
	if rounds[fs[0]] == nil {
		rounds[fs[0]] = map[string]map[int]round{}
	}
	if rounds[fs[0]][name] == nil {
		rounds[fs[0]][name] = map[int]round{}
	}
	rounds[fs[0]][name][r] = x
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func values(build, name string, get func(round) float64) []float64 {
	var out []float64
	for _, r := range sortedRounds(build, name) {
		out = append(out, get(rounds[build][name][r]))
	}
	return out
}

func sortedRounds(build, name string) []int {
	var rs []int
	for r := range rounds[build][name] {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

func cpu(r round) float64 { return r.cpu }

func report() {
	builds := []string{"before", "after"}
	names := []string{"Client/take", "Client/admit", "Client/bare", "Client/ping", "Client/wire",
		"ClientCluster/take", "ClientCluster/admit", "ClientCluster/bare", "ClientCluster/ping", "ClientCluster/wire", "ClientCluster/node"}
	fmt.Println("## Medians over the rounds")
	fmt.Println()
	fmt.Println("The servers' CPU is every node's INFO cpu (replicas included) around the design's calls, per call: blank where the build's benchmark did not report it.")
	fmt.Println()
	fmt.Println("| build | benchmark | rounds | client CPU µs/call (median [min–max]) | servers' CPU µs/call | wall µs/call | allocs/op | B/op |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, b := range builds {
		for _, n := range names {
			if len(rounds[b][n]) == 0 {
				continue
			}
			c := values(b, n, cpu)
			al := values(b, n, func(r round) float64 { return r.allocs })
			by := values(b, n, func(r round) float64 { return r.bytes })
			srv := ""
			if sv := values(b, n, func(r round) float64 { return r.srv }); slices.Max(sv) != 0 {
				srv = fmt.Sprintf("%.1f [%.1f–%.1f]", median(sv)/1e3, slices.Min(sv)/1e3, slices.Max(sv)/1e3)
			}
			fmt.Printf("| %s | %s | %d | %.1f [%.1f–%.1f] | %s | %.1f | %s | %s |\n", b, n, len(c),
				median(c)/1e3, slices.Min(c)/1e3, slices.Max(c)/1e3, srv,
				median(values(b, n, func(r round) float64 { return r.ns }))/1e3,
				span(al), span(by))
		}
	}
	fmt.Println()
	fmt.Println("## Ratios of client CPU per call")
	fmt.Println()
	fmt.Println("Each ratio is the median of the rounds' own ratios (the two designs ran in the same round), the range of those in brackets; p is the two-sided Mann–Whitney test of the two designs' rounds, and \"~\" marks a difference that is not significant (p ≥ 0.05).")
	fmt.Println()
	fmt.Println("| ratio | median [min–max] | p |")
	fmt.Println("|---|---:|---:|")
	type pair struct{ xb, x, yb, y string }
	var pairs []pair
	for _, b := range builds {
		for _, c := range []string{"Client", "ClientCluster"} {
			pairs = append(pairs,
				pair{b, c + "/take", b, c + "/bare"},
				pair{b, c + "/admit", b, c + "/take"},
				pair{b, c + "/take", b, c + "/ping"},
				pair{b, c + "/take", b, c + "/wire"},
				pair{b, c + "/bare", b, c + "/wire"},
				pair{b, c + "/ping", b, c + "/wire"})
		}
		pairs = append(pairs, pair{b, "ClientCluster/take", b, "Client/take"},
			pair{b, "ClientCluster/bare", b, "Client/bare"},
			pair{b, "ClientCluster/ping", b, "Client/ping"},
			pair{b, "ClientCluster/wire", b, "Client/wire"},
			pair{b, "ClientCluster/take", b, "ClientCluster/node"},
			pair{b, "ClientCluster/node", b, "ClientCluster/wire"},
			pair{b, "ClientCluster/node", b, "Client/take"})
	}
	pairs = append(pairs, pair{"after", "Client/take", "before", "Client/take"},
		pair{"after", "ClientCluster/take", "before", "ClientCluster/take"},
		pair{"after", "Client/admit", "before", "Client/admit"},
		pair{"after", "ClientCluster/admit", "before", "ClientCluster/admit"})
	for _, p := range pairs {
		med, lo, hi, pv, ok := ratio(p.xb, p.x, p.yb, p.y, 1)
		if !ok {
			continue
		}
		mark := ""
		if pv >= bench.Alpha {
			mark = " ~"
		}
		fmt.Printf("| %s %s ÷ %s %s | %.2f [%.2f–%.2f] | %.3f%s |\n", p.xb, p.x, p.yb, p.y, med, lo, hi, pv, mark)
	}
	fmt.Println()
	for _, b := range builds {
		targets(b)
	}
}

// targets prints the targets for build b.
func targets(b string) {
	if len(rounds[b]) == 0 {
		return
	}
	fmt.Println()
	fmt.Printf("## The issue's targets (build %s)\n", b)
	fmt.Println()
	fmt.Println("A target is met when the ratio is at or below it in every round, or when its median is below it and the Mann–Whitney test of the take's rounds against the reference's rounds times the target finds the difference significant; missed when the median is above it and the test is significant; otherwise not significant.")
	fmt.Println()
	target := func(what string, x, y string, limit float64) {
		med, lo, hi, pv, ok := ratio(b, x, b, y, limit)
		if !ok {
			return
		}
		verdict := "not significant"
		switch {
		case hi <= limit:
			verdict = "met (every round)"
		case med < limit && pv < bench.Alpha:
			verdict = fmt.Sprintf("met (p=%.3f)", pv)
		case med > limit && pv < bench.Alpha:
			verdict = fmt.Sprintf("MISSED (p=%.3f)", pv)
		}
		fmt.Printf("- %s ≤ %.1f: %.2f [%.2f–%.2f], %s\n", what, limit, med, lo, hi, verdict)
	}
	target("client CPU per take ÷ a bare go-redis FCALL, one server", "Client/take", "Client/bare", 1.5)
	target("client CPU per take ÷ a bare go-redis FCALL, Cluster", "ClientCluster/take", "ClientCluster/bare", 1.5)
	target("client CPU per take on a Cluster ÷ on one server", "ClientCluster/take", "Client/take", 1.3)
	al := values(b, "Client/take", func(r round) float64 { return r.allocs })
	if len(al) > 0 {
		v := "met"
		if slices.Max(al) > 8 {
			v = "MISSED"
		}
		fmt.Printf("- allocations per take ≤ 8, one server: %s, %s\n", span(al), v)
	}
}

// ratio is the within-round ratio of x's cpu-ns/op to y's, the median and
// range over the rounds both ran in, and the Mann–Whitney p of x's rounds
// against y's rounds scaled by k.
func ratio(xb, x, yb, y string, k float64) (med, lo, hi, p float64, ok bool) {
	var rs, xs, ys []float64
	for _, r := range sortedRounds(xb, x) {
		b, found := rounds[yb][y][r]
		if !found {
			continue
		}
		a := rounds[xb][x][r]
		rs = append(rs, a.cpu/b.cpu)
		xs = append(xs, a.cpu)
		ys = append(ys, k*b.cpu)
	}
	if len(rs) == 0 {
		return 0, 0, 0, 0, false
	}
	_, p = bench.MannWhitney(xs, ys)
	return median(rs), slices.Min(rs), slices.Max(rs), p, true
}

// span is v when every value is v, else min–max.
func span(vs []float64) string {
	lo, hi := slices.Min(vs), slices.Max(vs)
	if lo == hi {
		return strconv.FormatFloat(lo, 'f', -1, 64)
	}
	return fmt.Sprintf("%g–%g", lo, hi)
}
