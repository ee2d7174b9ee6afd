package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ErrNothingSelected is the error of a Run whose -run selects no case: a
// run that measures nothing is not a result.
var ErrNothingSelected = errors.New("tollgate bench: nothing would be measured")

// checkServers refuses a server suite asked for without its servers.
func (c Config) checkServers() error {
	switch {
	case c.Redis && c.RedisAddr == "":
		return fmt.Errorf("tollgate bench: -redis needs a redis-server address")
	case c.Etcd && (len(c.EtcdEndpoints) == 0 || c.RedisAddr == ""):
		return fmt.Errorf("tollgate bench: -etcd needs an etcd cluster's endpoints and a redis-server address")
	case c.RedisCluster && (len(c.RedisClusterOne) == 0 || len(c.RedisClusterThree) == 0):
		return fmt.Errorf("tollgate bench: -redis-cluster needs the addresses of a 1-primary and a 3-primary cluster")
	}
	return nil
}

// makeOut makes the output directory, a new temporary one when c.Out is
// empty.
func (c *Config) makeOut() error {
	if c.Out == "" {
		out, err := os.MkdirTemp("", "tollgate-bench-")
		if err != nil {
			return fmt.Errorf("tollgate bench: %w", err)
		}
		c.Out = out
		return nil
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("tollgate bench: -out: %w", err)
	}
	return nil
}

// runServerSuites runs the server-backed suites c asks for: their results,
// the Redis server's own time per command (nil without -redis, or when it
// could not be read, which is said on progress), and the cases that failed.
func (c Config) runServerSuites(rn *Runner, progress io.Writer) ([]Result, map[string]float64, []string) {
	var results []Result
	var serverUs map[string]float64
	var failed []string
	add := func(rs []Result, f []string) {
		results = append(results, rs...)
		failed = append(failed, f...)
	}
	if c.Redis {
		add(rn.Run(RedisSuite(c.RedisAddr)))
		var err error
		if serverUs, err = RedisServerTimes(c.RedisAddr); err != nil {
			fmt.Fprintf(progress, "tollgate bench: -redis: reading the server's command times: %v\n", err)
		}
	}
	if c.RedisCluster {
		add(rn.Run(RedisClusterSuite(c.RedisClusterOne, c.RedisClusterThree)))
	}
	if c.Etcd {
		add(rn.Run(EtcdSuite(c.EtcdEndpoints, c.RedisAddr)))
	}
	return results, serverUs, failed
}

// Run is `tollgate bench`: it measures the cases of the suite c selects
// (Resolve is applied first), the memory per idle key and after a reclaim,
// and with c.Redis the Redis cases, writing a line per finished case to
// progress, and writes to c.Out raw.txt (every round, in the format
// benchstat reads), RESULTS.md (the machine, the targets and the ratio
// tables) and the plots. A case that fails its check has no numbers: Run
// then writes the rest and returns an error that lists them.
func Run(c Config, progress io.Writer) error {
	c, err := c.Resolve()
	if err != nil {
		return err
	}
	if err := c.checkServers(); err != nil {
		return err
	}
	re := regexp.MustCompile(c.Run)
	if n := selected(c, re); n == 0 {
		return fmt.Errorf("%w: -run %q matches no case (the case names are printed as they run; bench/doc.go lists the suite)", ErrNothingSelected, c.Run)
	}
	if err := c.makeOut(); err != nil {
		return err
	}
	fmt.Fprintf(progress, "writing to %s\n", c.Out)
	if c.Rounds < MinRoundsForSignificance {
		fmt.Fprintf(progress, "with -rounds %d no difference can be significant at p < %v (that takes at least %d rounds; the default is %d): every timing target will read \"not significant\"\n", c.Rounds, Alpha, MinRoundsForSignificance, DefaultRounds)
	}
	began := time.Now()
	var raw bytes.Buffer
	raw.WriteString(RawHeader())
	rn := Runner{
		Rounds:    c.Rounds,
		Benchtime: c.Benchtime,
		Raw:       &raw,
		Progress:  func(s string) { fmt.Fprintln(progress, s) },
		Filter:    func(k Case) bool { return re.MatchString(k.Name) },
	}
	results, failed := rn.Run(Suite(c.Full))
	mem, reclaimed := memory(c, re, &raw, progress)
	redisResults, redisServerUs, serverFailed := c.runServerSuites(&rn, progress)
	failed = append(failed, serverFailed...)
	rawPath := filepath.Join(c.Out, "raw.txt")
	if err := os.WriteFile(rawPath, raw.Bytes(), 0o644); err != nil {
		return fmt.Errorf("tollgate bench: %w", err)
	}
	plots, err := WritePlots(c.Out, results)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	writeResults(&md, c, began, len(results)+len(redisResults), results, mem, reclaimed, failed)
	writeRedis(&md, redisResults, redisServerUs)
	fmt.Fprintf(&md, "\n## Plots\n\nA p99 point is the median of the rounds' p99; the dashed line is the clock reads alone (clock-ns), where a p99 measures the timer, not the operation.\n")
	if out := P99Outliers(append(slices.Clone(results), redisResults...)); len(out) > 0 {
		fmt.Fprintf(&md, "\nRounds whose p99 is more than %d× their case's median, left out of the plots:\n\n", outlierFactor)
		for _, o := range out {
			fmt.Fprintf(&md, "- %s\n", o)
		}
	}
	fmt.Fprintln(&md)
	for _, p := range plots {
		if strings.HasSuffix(p, ".png") {
			fmt.Fprintf(&md, "![%s](%s)\n", filepath.Base(p), filepath.Base(p))
		}
	}
	mdPath := filepath.Join(c.Out, "RESULTS.md")
	if err := os.WriteFile(mdPath, md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("tollgate bench: %w", err)
	}
	writeSummary(progress, c, results, mem)
	fmt.Fprintf(progress, "wrote %s, %s and %d plots in %s (%s)\n", rawPath, mdPath, len(plots), c.Out, time.Since(began).Round(time.Second))
	if len(failed) > 0 {
		return fmt.Errorf("tollgate bench: %d case(s) failed their checks and have no numbers:\n  %s", len(failed), strings.Join(failed, "\n  "))
	}
	return nil
}

// selected counts what c selects with re: the suite's cases, the memory
// measurements and, with c.Redis, the Redis cases.
func selected(c Config, re *regexp.Regexp) int {
	n := 0
	cases := Suite(c.Full)
	if c.Redis {
		cases = append(cases, RedisSuite(c.RedisAddr)...)
	}
	if c.RedisCluster {
		cases = append(cases, RedisClusterSuite(c.RedisClusterOne, c.RedisClusterThree)...)
	}
	if c.Etcd {
		cases = append(cases, EtcdSuite(c.EtcdEndpoints, c.RedisAddr)...)
	}
	for _, k := range cases {
		if re.MatchString(k.Name) {
			n++
		}
	}
	if c.MemKeys > 0 {
		for _, d := range MemoryDesigns() {
			if re.MatchString("MemoryPerKey/design=" + d.Name) {
				n++
			}
		}
		if re.MatchString("MemoryReclaimed") {
			n++
		}
	}
	return n
}

// memory measures, unless c.MemKeys is 0, the memory per idle key of each
// design re selects and the memory left after tollgate reclaims idle keys,
// writing each figure to raw and a line to progress.
func memory(c Config, re *regexp.Regexp, raw, progress io.Writer) ([]MemResult, []ReclaimRound) {
	if c.MemKeys == 0 {
		return nil, nil
	}
	var mem []MemResult
	for _, d := range MemoryDesigns() {
		if !re.MatchString("MemoryPerKey/design=" + d.Name) {
			continue
		}
		m := MemResult{Design: d.Name, Keys: c.MemKeys, BytesPerKey: MemoryPerKey(d, c.MemKeys)}
		fmt.Fprintf(progress, "memory %s: %.1f bytes per idle key at %d keys\n", d.Name, m.BytesPerKey, m.Keys)
		fmt.Fprintln(raw, m.MemLine())
		mem = append(mem, m)
	}
	if !re.MatchString("MemoryReclaimed") {
		return mem, nil
	}
	reclaimed := ReclaimedMemory(c.MemKeys, 3)
	for _, r := range reclaimed {
		fmt.Fprintf(progress, "memory reclaimed, round %d: %d keys held %.1f bytes/key, %d bytes left after the reclaim\n", r.Round, r.Keys, float64(r.Held)/float64(r.Keys), r.Left)
		fmt.Fprintln(raw, r.Line())
	}
	return mem, reclaimed
}

// writeResults writes RESULTS.md up to its Redis section: the header with
// the run (of cases cases in all) and the machine, the targets, the failed
// checks and the ratio tables.
func writeResults(md io.Writer, c Config, began time.Time, cases int, results []Result, mem []MemResult, reclaimed []ReclaimRound, failed []string) {
	mode := "quick"
	if c.Full {
		mode = "full"
	}
	fmt.Fprintf(md, "# tollgate bench results\n\n")
	fmt.Fprintf(md, "Measured %s (%s run, %d round(s), %v per case per round, %d cases, %s wall).\n\n",
		began.UTC().Format("2006-01-02 15:04 MST"), mode, c.Rounds, c.Benchtime, cases, time.Since(began).Round(time.Second))
	fmt.Fprintf(md, "```\ncpu: %s\n%s\n```\n\n", CPUModel(), Env())
	if n := Noise(results); n == n {
		fmt.Fprintf(md, "Noise: the median case's ns/op varied by %.0f%% between rounds ((max−min)/median).\n\n", 100*n)
	}
	fmt.Fprintf(md, "Ratios are tollgate's ns/op (wall time per operation, all goroutines together) divided by the peer's at the same goroutine count: the ratio of the two medians over the rounds, with the range of the rounds' own ratios in brackets (the designs of a goroutine count run one after the other in every round), then the ratio of CPU time per operation (process user+system time, GC included) in parentheses. Below 1.00 tollgate is faster; **bold** marks where it loses on wall time. %s\n\n", significanceNote(c.Rounds))
	fmt.Fprintf(md, "p50 and p99 are single operations timed between two clock reads; \"(timer)\" marks a latency under twice what the clock reads alone take (clock-ns in raw.txt), which measures the timer more than the operation: ns/op, timed over N operations, is the figure to read there.\n\n## Targets\n\n")
	WriteTargets(md, Targets(results, mem))
	if len(failed) > 0 {
		fmt.Fprintf(md, "\n## Failed checks (these cases have no numbers)\n\n")
		for _, f := range failed {
			fmt.Fprintf(md, "- %s\n", f)
		}
	}
	fmt.Fprintf(md, "\n## Ratio tables\n\nThe floor columns (bench/floor.go) divide by what any design pays that writes the same shared word the same number of times and does nothing else: `floor-cas128`, a 128-bit load and compare-and-swap loop on the key's word, is a take's floor; `floor-cas128x2`, two of them on one word, reserve+release's; `floor-add` is one atomic add, the cheapest write; `floor-load128`, one 128-bit snapshot load of the key's word with nothing written, is a refusal's floor; `floor-handoff`, a request carried to an idle owner goroutine and the reply carried back (two wake-ups), is the full cycle's. %s measures the write floors with each goroutine on a line of its own, nothing shared.\n", floorOwnGroup)
	WriteTable(md, results, mem)
	WriteReclaimed(md, reclaimed)
}

// writeRedis writes RESULTS.md's Redis section, if the run measured the
// Redis cases: their ratio table and the server's own time per call.
func writeRedis(md io.Writer, rs []Result, serverUs map[string]float64) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(md, "\n## Redis\n")
	if hasGroup(rs, RedisGroup) {
		fmt.Fprintf(md, "\nA take from impl/redis/tokenbucket (one FCALL of its library) against go-redis/redis_rate v10 (one EVALSHA) and PING (the floor: a round trip that does nothing), on one local redis-server, each design with its own client of go-redis's default options and retries off, every take admitted. The server shares the machine's cores with the benchmark.\n")
	}
	if hasGroup(rs, RedisClusterGroup) {
		fmt.Fprintf(md, "\nOn a Redis Cluster (%s): takes on three tables, worker w on table w%%3, on a cluster of 3 primaries with each table on its own primary (tollgate) and on a cluster of 1 primary holding all three (%s); every primary has a replica. tollgate ÷ %s below 1 is the speed-up the two extra primaries bring; every node shares the machine's cores with the benchmark.\n", RedisClusterGroup, OnePrimary, OnePrimary)
	}
	if hasGroup(rs, EtcdGroup) {
		fmt.Fprintf(md, "\nOn etcd (%s): a take from impl/etcd/tokenbucket (one Txn compared on the bucket's ModRevision, decided on the bucket the worker's own last take wrote; the first take of a key reads it first from the client's own member; a refusal would be confirmed through the leader, and none happens here) on a cluster of 3 etcd members, against the same take from impl/redis/tokenbucket on one redis-server (%s) one etcd Put (%s, the floor of a consensus write) and the take's own Txn alone on a bare client (%s: a put compared on the key's ModRevision, with the take's two reads as its Else; the floor of a write committed by compare-and-swap), every take admitted, each worker on a key of its own; every member and the redis-server share the machine's cores and disk with the benchmark.\n", EtcdGroup, RedisTake, EtcdPut, EtcdTxn)
		fmt.Fprintf(md, "\nRefusals on etcd (%s): a take of a bucket the worker emptied with its own last take, refused on one linearizable Get of the bucket alone through the leader, writing nothing, against one linearizable Get of a key of the worker's own (%s).\n", EtcdRefuseGroup, EtcdGet)
	}
	if n := Noise(rs); n == n {
		fmt.Fprintf(md, "\nNoise: the median Redis case's ns/op varied by %.0f%% between rounds.\n", 100*n)
	}
	WriteTable(md, rs, nil)
	writeServerTimes(md, rs)
	if len(serverUs) > 0 {
		fmt.Fprintf(md, "\nServer time per call over the whole run (INFO commandstats): FCALL (tollgate) %.2f µs, EVALSHA (redis_rate) %.2f µs, PING %.2f µs.\n",
			serverUs["fcall"], serverUs["evalsha"], serverUs["ping"])
	}
}

// hasGroup reports whether rs holds a result of group.
func hasGroup(rs []Result, group string) bool {
	for _, r := range rs {
		if r.Group == group {
			return true
		}
	}
	return false
}

// significanceNote says how the differences were tested, and whether the
// rounds could show any.
func significanceNote(rounds int) string {
	note := fmt.Sprintf("A difference counts only where it is significant: a Mann–Whitney U test of the %d rounds' ns/op of one design against the other's, two-sided, p < %v (benchstat's test and level); \"~\" marks a ratio whose difference is not significant, and a target with one reads \"not significant\" instead of met or missed.", rounds, Alpha)
	if rounds < MinRoundsForSignificance {
		note += fmt.Sprintf(" With %d round(s) no difference can be: that takes at least %d rounds of each design (6 tolerate a few rounds ordered the other way).", rounds, MinRoundsForSignificance)
	}
	return note
}

// writeSummary writes the run's outcome to the terminal: every target with
// its verdict, and how many were met, missed or not significant.
func writeSummary(w io.Writer, c Config, results []Result, mem []MemResult) {
	ts := Targets(results, mem)
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsummary (%d rounds; a verdict needs Mann–Whitney p < %v, else ~):\n", c.Rounds, Alpha)
	counts := map[string]int{}
	for _, t := range ts {
		v := t.Verdict()
		if t.N > 0 {
			fmt.Fprintf(w, "  %s: %.2f× (p=%.3f) — %s\n", t.What, t.Ratio, t.P, v)
		} else {
			fmt.Fprintf(w, "  %s: %s — %s\n", t.What, t.Text, v)
		}
		switch {
		case v == "met":
			counts["met"]++
		case v == "MISSED":
			counts["missed"]++
		case strings.HasPrefix(v, "~"):
			counts["not significant"]++
		default:
			counts["borderline"]++
		}
	}
	fmt.Fprintf(w, "  %d met, %d missed, %d not significant, %d borderline\n", counts["met"], counts["missed"], counts["not significant"], counts["borderline"])
}

// writeServerTimes writes, for the cases that report it, the server's own
// time per call (server-ns/op: INFO commandstats over each Redis case, the
// members' CPU time over each etcd case) by design, median over the rounds, and tollgate's against each
// peer's: the ratio of the medians, the largest ratio of one round to the
// same round of the peer (the designs run one after the other in a round),
// and the Mann–Whitney p of the rounds.
func writeServerTimes(md io.Writer, rs []Result) {
	for _, group := range groups(rs) {
		var designs []string
		for _, d := range append([]string{Tollgate}, peersOf(rs, group)...) {
			if r, ok := find(rs, group, d, gsOf(rs, group)[0]); ok && len(r.ServerRounds) > 0 {
				designs = append(designs, d)
			}
		}
		if len(designs) < 2 || designs[0] != Tollgate {
			continue
		}
		how := "INFO commandstats over each case"
		if strings.HasPrefix(group, "ETCD/") {
			how = "the CPU time of the three members together, each member's process_cpu_seconds_total read from its /metrics before and after each case, 10 ms resolution per member"
		}
		fmt.Fprintf(md, "\nServer time per call, ns (%s, median of the rounds), %s:\n\n", how, group)
		cols := append([]string{"goroutines"}, designs...)
		for _, d := range designs[1:] {
			cols = append(cols, "÷ "+d+" (worst round, p)")
		}
		tableHead(md, cols)
		for _, g := range gsOf(rs, group) {
			tg, ok := find(rs, group, Tollgate, g)
			if !ok {
				continue
			}
			fmt.Fprintf(md, "| %d |", g)
			for _, d := range designs {
				r, _ := find(rs, group, d, g)
				fmt.Fprintf(md, " %.0f |", median(r.ServerRounds))
			}
			for _, d := range designs[1:] {
				r, _ := find(rs, group, d, g)
				worst := 0.0
				for i := range min(len(tg.ServerRounds), len(r.ServerRounds)) {
					worst = max(worst, tg.ServerRounds[i]/r.ServerRounds[i])
				}
				_, p := MannWhitney(tg.ServerRounds, r.ServerRounds)
				fmt.Fprintf(md, " %.2f (%.2f, p=%.3f) |", median(tg.ServerRounds)/median(r.ServerRounds), worst, p)
			}
			fmt.Fprintln(md)
		}
	}
}
